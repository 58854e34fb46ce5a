/**
 * JMH benchmarks of kvpager's own paths on simulated devices, each beside a floor measured in the
 * same run: {@link io.kvpager.harness.bench.FanOutBenchmark}, run with its ratios by
 * {@link io.kvpager.harness.bench.FanOutBench}.
 */
package io.kvpager.harness.bench;
