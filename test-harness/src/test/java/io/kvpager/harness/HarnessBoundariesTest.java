package io.kvpager.harness;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test harness's main classes (benchmarks, soak, fuzz, GPU runner): no package cycles, and no
 * use of {@code io.kvpager.impl}; what they look into a coordinator with is
 * {@code io.kvpager.internal.CoordinatorView}. No exceptions.
 */
class HarnessBoundariesTest {

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importUrl(PoolSnapshot.class.getProtectionDomain().getCodeSource().getLocation());
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        slices().matching("io.(**)").should().beFreeOfCycles().check(main);
    }

    @Test
    void nothingUsesImpl() {
        noClasses().should().dependOnClassesThat().resideInAPackage("io.kvpager.impl..").check(main);
    }

    @Test
    void theRulesSeeTheCodeTheyGuard() {
        assertThat(main.containPackage("io.kvpager.harness.soak") && main.containPackage("io.kvpager.harness.bench")).isTrue();
    }
}
