package io.kvpager;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.kvpager.core.PageLedger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.stream.Stream;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * kvpager-core's packages, on its compiled main classes: no package cycles, and each layer uses
 * only those below it: the vocabulary ({@code io.kvpager}), the {@code Device} SPI, the ledger
 * ({@code io.kvpager.core}), the device side ({@code io.kvpager.device}, which runs a ledger's pages
 * on a device). No exceptions.
 */
class CorePackagesTest {

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importUrl(PageLedger.class.getProtectionDomain().getCodeSource().getLocation());
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        slices().matching("io.(**)").should().beFreeOfCycles().check(main);
    }

    @Test
    void dependenciesPointDownTheLayers() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("vocabulary").definedBy("io.kvpager")
                .layer("spi").definedBy("io.kvpager.spi..")
                .layer("ledger").definedBy("io.kvpager.core..")
                .layer("device").definedBy("io.kvpager.device..")
                .whereLayer("device").mayNotBeAccessedByAnyLayer()
                .whereLayer("ledger").mayOnlyBeAccessedByLayers("device")
                .whereLayer("spi").mayOnlyBeAccessedByLayers("ledger", "device")
                .check(main);
    }

    @Test
    void theRulesSeeTheCodeTheyGuard() {
        // guards against a rule that passes because the import found nothing
        assertThat(Stream.of("io.kvpager", "io.kvpager.spi", "io.kvpager.core", "io.kvpager.device"))
                .allMatch(name -> main.containPackage(name) && !main.getPackage(name).getClasses().isEmpty());
    }
}
