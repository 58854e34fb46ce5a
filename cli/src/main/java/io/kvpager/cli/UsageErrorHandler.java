package io.kvpager.cli;

import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;

/**
 * Bad arguments: one line on stderr naming the command and what was wrong, exit code 2. The full
 * usage stays behind {@code --help}, so a script's log shows the error and not a page of options.
 */
final class UsageErrorHandler implements IParameterExceptionHandler {

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine command = ex.getCommandLine();
        String name = command.getCommandSpec().qualifiedName();
        command.getErr().println(name + ": " + OneLine.of(ex.getMessage()) + " (see '" + name + " --help')");
        command.getErr().flush();
        return command.getCommandSpec().exitCodeOnInvalidInput();
    }
}
