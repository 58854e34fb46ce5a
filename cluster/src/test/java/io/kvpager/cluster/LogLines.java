package io.kvpager.cluster;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The lines one class logs while it is open, formatted, for a test to look for. */
final class LogLines implements AutoCloseable {

    private final Logger logger;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            lines.add(event.getFormattedMessage());
        }
    };

    private LogLines(Class<?> source) {
        logger = (Logger) LoggerFactory.getLogger(source);
        appender.start();
        logger.addAppender(appender);
    }

    /** Starts collecting what {@code source} logs. */
    static LogLines of(Class<?> source) {
        return new LogLines(source);
    }

    /** What was logged so far; a live view. */
    List<String> lines() {
        return lines;
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
    }
}
