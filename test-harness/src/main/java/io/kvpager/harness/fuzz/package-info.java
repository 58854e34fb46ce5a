/**
 * The fuzz: seeded streams of malformed and hostile event-bus messages for a pool's workers and
 * coordinator ({@link io.kvpager.harness.fuzz.HostileMessages}), sent many at a time and checked
 * answer by answer ({@link io.kvpager.harness.fuzz.Fuzz}).
 */
package io.kvpager.harness.fuzz;
