package io.kvpager.cli;

import java.util.logging.LogManager;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * java.util.logging's configuration class for the {@code kvpager} command: JUL's own console
 * handler goes, and every JUL record goes to SLF4J (logback), so that one config and one format
 * govern every line. JUL instantiates it when it is first used.
 */
public final class JulToSlf4j {

    public JulToSlf4j() {
        LogManager.getLogManager().reset();
        SLF4JBridgeHandler.install();
    }
}
