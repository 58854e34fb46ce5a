package io.kvpager.impl;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import io.kvpager.cache.KvCache;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The packages' roles, checked on the compiled main classes: no two packages depend on each other,
 * even through others; the API and the internal packages below {@code impl} never reach into it,
 * the broker never into the coordinator or the worker, and only the deployment and the one door
 * for tools ({@code io.kvpager.internal}) sit above the coordinator and the worker; the rank
 * worker's thread never reaches into the coordinator, cluster membership or the GPU broker; the
 * coordinator reaches a worker over the event bus, never through the worker's classes; the public
 * packages show no impl type. No rule has an exception.
 */
class PackageRolesTest {

    private static final String WORKER = "io.kvpager.impl.worker";
    private static final String COORDINATOR = "io.kvpager.impl.coordinator";
    private static final String MEMBERSHIP = "io.kvpager.internal.membership";
    private static final String DEPLOYMENT = "io.kvpager.impl.deployment";
    private static final String BROKER = "io.kvpager.impl.broker";
    private static final List<String> PUBLIC = List.of("io.kvpager.cache", "io.kvpager.rxjava3.cache", "io.kvpager.worker");

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        // this module's main classes, where KvCache was compiled to; the classpath's jars need no scan
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importUrl(KvCache.class.getProtectionDomain().getCodeSource().getLocation());
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        noCycles().check(main);
    }

    @Test
    void theCycleRuleCatchesACycle() {
        JavaClasses fixture = new ClassFileImporter().importPackages("io.kvpager.impl.cyclefixture");
        assertThatThrownBy(() -> noCycles().check(fixture)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("cyclefixture.one").hasMessageContaining("cyclefixture.two");
    }

    /** One slice per package: a cycle between two packages, however long, fails. */
    private static ArchRule noCycles() {
        return slices().matching("io.(**)").should().beFreeOfCycles();
    }

    @Test
    void dependenciesPointDownTheLayers() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("api and internal").definedBy("io.kvpager.cache..", "io.kvpager.worker..", "io.kvpager.rxjava3..",
                        "io.kvpager.protocol..", "io.kvpager.internal.options..", "io.kvpager.internal.membership..",
                        "io.kvpager.internal.books..", "io.kvpager.internal.bus..")
                .layer("broker").definedBy(BROKER + "..")
                .layer("roles").definedBy(COORDINATOR + "..", WORKER + "..")
                .layer("assembly").definedBy(DEPLOYMENT + "..", "io.kvpager.internal")
                .whereLayer("assembly").mayNotBeAccessedByAnyLayer()
                .whereLayer("roles").mayOnlyBeAccessedByLayers("assembly")
                .whereLayer("broker").mayOnlyBeAccessedByLayers("roles", "assembly")
                .check(main);
    }

    @Test
    void theWorkerNeverReachesTheCoordinatorMembershipOrBroker() {
        forbid(WORKER, COORDINATOR, MEMBERSHIP, BROKER).check(main);
    }

    @Test
    void theCoordinatorReachesWorkersOnlyOverTheBus() {
        forbid(COORDINATOR, WORKER).check(main);
    }

    @Test
    void publicPackagesShowNoImplTypeInTheirSignatures() {
        classes().that().resideInAnyPackage(PUBLIC.toArray(String[]::new)).and().arePublic()
                .should(showNoImplType()).check(main);
    }

    @Test
    void theRulesSeeTheCodeTheyGuard() {
        // guards against a rule that passes because the import found nothing
        assertThat(Stream.of(WORKER, COORDINATOR, MEMBERSHIP, BROKER, DEPLOYMENT, "io.kvpager.cache", "io.kvpager.worker",
                "io.kvpager.protocol", "io.kvpager.internal", "io.kvpager.internal.options", "io.kvpager.internal.books",
                "io.kvpager.internal.bus"))
                .allMatch(name -> main.containPackage(name) && !main.getPackage(name).getClasses().isEmpty());
    }

    /** Classes of {@code from} (and its subpackages) depend on none of {@code forbidden}'s. */
    private static ArchRule forbid(String from, String... forbidden) {
        ArchCondition<JavaClass> condition = new ArchCondition<>("depend on no class of " + String.join(", ", forbidden)) {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
                    String target = dependency.getTargetClass().getPackageName();
                    boolean crosses = Stream.of(forbidden).anyMatch(name -> inside(target, name));
                    if (crosses) {
                        events.add(SimpleConditionEvent.violated(dependency, dependency.getDescription()));
                    }
                }
            }
        };
        return classes().that().resideInAPackage(from + "..").should(condition);
    }

    private static ArchCondition<JavaClass> showNoImplType() {
        return new ArchCondition<>("show no io.kvpager.impl type in a public or protected signature") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                for (JavaCodeUnit member : type.getCodeUnits()) {
                    if (!visible(member.getModifiers())) {
                        continue;
                    }
                    Stream<JavaType> shown = Stream.concat(Stream.of(member.getReturnType()), member.getParameterTypes().stream());
                    shown.flatMap(t -> t.getAllInvolvedRawTypes().stream())
                            .filter(raw -> inside(raw.getPackageName(), "io.kvpager.impl"))
                            .forEach(raw -> events.add(SimpleConditionEvent.violated(member,
                                    member.getFullName() + " shows " + raw.getName())));
                }
                type.getFields().stream().filter(field -> visible(field.getModifiers()))
                        .filter(field -> inside(field.getRawType().getPackageName(), "io.kvpager.impl"))
                        .forEach(field -> events.add(SimpleConditionEvent.violated(field,
                                field.getFullName() + " shows " + field.getRawType().getName())));
            }
        };
    }

    private static boolean visible(Set<JavaModifier> modifiers) {
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static boolean inside(String packageName, String root) {
        return packageName.equals(root) || packageName.startsWith(root + ".");
    }


    private static String topLevel(JavaClass type) {
        String name = type.getName();
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }
}
