/**
 * Prometheus metrics and health over HTTP for the caches and workers of a {@code kvpager} process:
 * Vert.x's own meters through vertx-micrometer-metrics, kvpager's from the {@code kvpager-metrics}
 * library.
 */
package io.kvpager.cli.metrics;
