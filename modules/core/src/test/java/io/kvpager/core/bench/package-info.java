/**
 * JMH benchmarks of the core ledger. Run them with
 * {@code mvn -o -q -pl modules/core test-compile exec:exec -Djmh.args="AllocFreeBenchmark -f 1 -wi 2 -i 3"}
 * (JDK 25 as {@code JAVA_HOME}); {@code jmh.args} takes any JMH command line.
 */
package io.kvpager.core.bench;
