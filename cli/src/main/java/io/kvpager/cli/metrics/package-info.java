/**
 * Prometheus metrics and health over HTTP for caches running in this Vert.x: Vert.x's own meters
 * through vertx-micrometer-metrics, kvpager's read from each cache's stats.
 */
package io.kvpager.cli.metrics;
