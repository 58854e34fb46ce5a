/**
 * Fixtures for end-to-end tests of kvpager on simulated GPUs: a pool's rank workers on GPUs of
 * their own ({@link io.kvpager.harness.SimRanks}), an event-bus tap that intercepts the requests
 * between coordinator and ranks ({@link io.kvpager.harness.BusTap}), and a snapshot that compares
 * what every simulated device holds with what the coordinator's ledger believes
 * ({@link io.kvpager.harness.PoolSnapshot}). The soak ({@code soak}), the fuzz ({@code fuzz}) and
 * the benchmarks ({@code bench}) build on them.
 */
package io.kvpager.harness;
