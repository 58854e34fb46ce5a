package io.kvpager.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvpager.spi.DeviceFactory;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;

/**
 * Marks a test class that needs a real GPU: tagged {@code gpu} (left out of the normal build),
 * every test skipped with the factory's reason where there is no CUDA device, and a
 * {@link CudaDevice} on GPU 0 injected where asked for, opened once per class, attached to the
 * test thread and closed after the class.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(OnGpu.Device.class)
@interface OnGpu {

    final class Device implements TestInstancePreConstructCallback, BeforeEachCallback, ParameterResolver {

        private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(OnGpu.class);

        /** Before the constructor asks for a device, so the skip is not a resolution error. */
        @Override
        public void preConstructTestInstance(TestInstanceFactoryContext factory, ExtensionContext context) {
            assumeGpu();
        }

        @Override
        public void beforeEach(ExtensionContext context) {
            assumeGpu();
        }

        private static void assumeGpu() {
            Optional<String> reason = DeviceFactory.forKind("cuda").unavailableReason();
            assumeTrue(reason.isEmpty(), () -> "skipped, no CUDA device to test on: " + reason.orElseThrow());
        }

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == CudaDevice.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            ExtensionContext classContext = context;
            while (classContext.getTestMethod().isPresent()) {
                classContext = classContext.getParent().orElseThrow();
            }
            return classContext.getStore(NAMESPACE)
                    .getOrComputeIfAbsent("device", key -> new Opened(Gpu.open("pp0/tp0")), Opened.class)
                    .device();
        }

        /** Closed by JUnit when the class's store is. */
        private record Opened(CudaDevice device) implements AutoCloseable {
            @Override
            public void close() {
                device.close();
            }
        }
    }
}
