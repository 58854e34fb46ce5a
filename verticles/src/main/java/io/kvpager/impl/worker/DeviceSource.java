package io.kvpager.impl.worker;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;

/**
 * Opens the device a rank worker owns. Called once, on the rank's own thread, in the worker's
 * start. The usual source finds the {@link DeviceFactory} of the configured kind; tests pass one
 * that decorates the device to watch its calls.
 */
@FunctionalInterface
interface DeviceSource {

    /** Opens the configured kind's device for GPU {@code config.gpu()} and rank {@code config.rank()}. */
    DeviceSource FACTORY = config -> DeviceFactory.forKind(config.device())
            .open(config.gpu(), config.rank(), config.deviceOptions());

    Device open(WorkerConfig config);
}
