package io.kvpager.cli;

import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * A command that failed while running: one line on stderr with the cause, exit code 1. The stack
 * trace goes to the log at debug level, for when the line is not enough.
 */
final class FailureHandler implements IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception ex, CommandLine command, ParseResult parseResult) {
        org.slf4j.LoggerFactory.getLogger(FailureHandler.class).debug("{} failed", command.getCommandName(), ex);
        command.getErr().println(command.getCommandSpec().qualifiedName() + ": " + OneLine.of(ex));
        command.getErr().flush();
        return command.getCommandSpec().exitCodeOnExecutionException();
    }
}
