package io.kvpager.impl.cyclefixture.one;

import io.kvpager.impl.cyclefixture.two.Pong;

/** Half of a two-package cycle that {@code PackageRolesTest} must catch. */
public final class Ping {

    public Pong answer() {
        return new Pong();
    }
}
