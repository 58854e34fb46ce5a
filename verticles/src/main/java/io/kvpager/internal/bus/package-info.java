/**
 * The clustered event bus as kvpager's roles use it: {@link io.kvpager.internal.bus.KeptRegistration}
 * keeps a role's consumers listed in the cluster's registry of consumers.
 */
package io.kvpager.internal.bus;
