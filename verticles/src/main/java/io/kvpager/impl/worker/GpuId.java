package io.kvpager.impl.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The name of the physical GPU a rank worker runs on, the same in every process that uses that
 * GPU: {@code cuda:<physical>@<host>} or {@code sim:<gpuKey>:<index>@<host>}. It names the GPU's
 * memory broker, so two caches whose ranks share a GPU draw on one budget.
 *
 * <p>A CUDA index is the process's view: with {@code CUDA_VISIBLE_DEVICES=2,3}, index 0 is
 * physical GPU 2. The physical entry of that list is used (an index, or a {@code GPU-<uuid>}), so
 * two processes that see the same GPU under different indexes still name it alike. A simulated
 * GPU stands for GPU {@code index} of its host under its {@code gpuKey}.
 */
record GpuId(String kind, String physical, String host) {

    GpuId {
        if (kind == null || physical == null || host == null || physical.isBlank() || host.isBlank()) {
            throw new IllegalArgumentException("a GPU id needs a kind, a physical GPU and a host, got " + kind + ", "
                    + physical + ", " + host);
        }
    }

    /** The GPU of {@code config} on this host, seen through {@code visibleDevices} ({@code CUDA_VISIBLE_DEVICES}, or null). */
    static GpuId of(WorkerConfig config, String host, String visibleDevices) {
        if ("sim".equals(config.device())) {
            return new GpuId("sim", config.sim().gpuKey() + ":" + config.gpu(), host);
        }
        String physical = String.valueOf(config.gpu());
        if (visibleDevices != null && !visibleDevices.isBlank()) {
            String[] visible = visibleDevices.split(",");
            if (config.gpu() < visible.length && !visible[config.gpu()].isBlank()) {
                physical = visible[config.gpu()].trim();
            }
        }
        return new GpuId(config.device(), physical, host);
    }

    /** The GPU of {@code config} in this process on this host. */
    static GpuId of(WorkerConfig config) {
        return of(config, localHost(), System.getenv("CUDA_VISIBLE_DEVICES"));
    }

    private static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            // no name for this host: one that all its processes still agree on
            return "localhost";
        }
    }

    @Override
    public String toString() {
        return kind + ":" + physical + "@" + host;
    }
}
