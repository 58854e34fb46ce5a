package io.kvpager.impl.cyclefixture.two;

import io.kvpager.impl.cyclefixture.one.Ping;

/** The other half of the cycle. */
public final class Pong {

    public Ping serve() {
        return new Ping();
    }
}
