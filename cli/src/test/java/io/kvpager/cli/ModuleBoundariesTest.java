package io.kvpager.cli;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.kvpager.attention.PagedDecodeAttention;
import io.kvpager.cache.KvCache;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.core.PageLedger;
import io.kvpager.cuda.CudaDeviceFactory;
import io.kvpager.metrics.KvCacheMeters;
import io.kvpager.sim.FaultPlan;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.util.List;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every module this executable is built from, on their compiled main classes: no package cycles
 * across them, and nothing outside kvpager-verticles uses {@code io.kvpager.impl}: the CLI, the
 * cluster node, the metrics and the device modules get what they need from the public packages
 * or from {@code io.kvpager.internal}. No exceptions.
 */
class ModuleBoundariesTest {

    private static JavaClasses everything;
    private static JavaClasses outsideVerticles;
    private static JavaClasses verticles;

    @BeforeAll
    static void importMainClasses() {
        List<URL> others = Stream.of(KvPager.class, ClusterNode.class, KvCacheMeters.class, FaultPlan.class,
                CudaDeviceFactory.class, PagedDecodeAttention.class, PageLedger.class).map(ModuleBoundariesTest::location).toList();
        String verticlesJar = location(KvCache.class).toString();
        everything = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importUrls(Stream.concat(others.stream(), Stream.of(location(KvCache.class))).toList());
        DescribedPredicate<JavaClass> inVerticles = DescribedPredicate.describe("in kvpager-verticles", type ->
                type.getSource().map(source -> source.getUri().toString().contains(verticlesJar.replaceFirst("^file:", ""))).orElse(false));
        verticles = everything.that(inVerticles);
        outsideVerticles = everything.that(DescribedPredicate.not(inVerticles));
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        slices().matching("io.(**)").should().beFreeOfCycles().check(everything);
    }

    @Test
    void nothingOutsideTheVerticlesModuleUsesImpl() {
        noImpl().check(outsideVerticles);
    }

    @Test
    void theRulesSeeTheCodeTheyGuard() {
        // the impl rule would fail on the one module allowed impl: it is not vacuous
        assertThatThrownBy(() -> noImpl().check(verticles)).isInstanceOf(AssertionError.class);
        assertThat(Stream.of("io.kvpager.cli", "io.kvpager.cli.demo", "io.kvpager.cluster", "io.kvpager.metrics",
                "io.kvpager.sim", "io.kvpager.cuda", "io.kvpager.attention", "io.kvpager.core"))
                .allMatch(name -> outsideVerticles.containPackage(name) && !outsideVerticles.getPackage(name).getClasses().isEmpty());
    }

    private static ArchRule noImpl() {
        return noClasses().should().dependOnClassesThat().resideInAPackage("io.kvpager.impl..")
                .because("io.kvpager.impl is kvpager-verticles' inside; siblings use the public or io.kvpager.internal packages");
    }

    private static URL location(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }
}
