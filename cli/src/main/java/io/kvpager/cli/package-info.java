/**
 * The {@code kvpager} command line ({@link io.kvpager.cli.KvPager}): picocli commands for the demo,
 * for looking at and limiting running caches, and for starting clustered workers and coordinators.
 * Bad arguments end with one line on stderr and exit code 2.
 */
package io.kvpager.cli;
