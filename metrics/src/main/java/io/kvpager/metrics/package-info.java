/**
 * kvpager's meters and health for any Micrometer {@code MeterRegistry}: an application that embeds
 * kvpager registers them in its own registry ({@link io.kvpager.metrics.KvCacheMeters}), and the
 * {@code kvpager} command serves the same ones over HTTP. Latencies are histograms with Prometheus
 * buckets; health is ready, degraded or failed, with the reason.
 */
package io.kvpager.metrics;
