package io.kvpager.cluster;

import io.kvpager.cache.KvCacheOptions;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class ClusterNodeOptionsTest {

    @Test
    void defaultsBindLoopbackAndJoinThroughIt() {
        ClusterNodeOptions options = new ClusterNodeOptions();
        assertThat(options.getClusterName()).isEqualTo("kvpager");
        assertThat(options.getHost()).isEqualTo("127.0.0.1");
        assertThat(options.getPort()).isZero();
        assertThat(options.getMemberPort()).isEqualTo(5701);
        assertThat(options.getMembers()).containsExactly("127.0.0.1");
        assertThat(options.getQuorum()).isEqualTo(1);
        assertThat(options.isTls()).isFalse();
    }

    @Test
    void survivesAJsonRoundTrip() {
        ClusterNodeOptions options = new ClusterNodeOptions().setClusterName("llama-prod").setHost("10.0.0.7").setPort(15701)
                .setMemberPort(5801).setMembers(List.of("10.0.0.5:5801", "10.0.0.6", "[::1]:5701")).setQuorum(2).setConfig("cluster.xml")
                .setKeyStore("node.p12").setKeyStorePassword("secret").setTrustStore("ca.p12").setTrustStorePassword("other")
                .setClusterSecret("the-cluster-secret-0123");
        ClusterNodeOptions back = new ClusterNodeOptions(options.toJson());
        assertThat(back.toJson()).isEqualTo(options.toJson());
        assertThat(back.isTls()).isTrue();
        assertThat(options.toString()).doesNotContain("secret", "other", "the-cluster").contains("***");
    }

    static Stream<Arguments> badJson() {
        return Stream.of(
                arguments(new JsonObject().put("clusterNmae", "x"), "unknown cluster option 'clusterNmae'; known cluster options: clusterName, host, port, memberPort, members, quorum, config, "
                        + "keyStore, keyStorePassword, trustStore, trustStorePassword, clusterSecret"),
                arguments(new JsonObject().put("clusterName", "has space"), "clusterName must be 1 to 64 letters, digits, '.', '-' or '_', got 'has space'"),
                arguments(new JsonObject().put("clusterName", ""), "clusterName must be 1 to 64 letters, digits, '.', '-' or '_', got ''"),
                arguments(new JsonObject().put("host", "localhost"), "host must be an IP address such as 127.0.0.1, got 'localhost'"),
                arguments(new JsonObject().put("host", 7), "host must be a string, got 7 (Integer)"),
                arguments(new JsonObject().put("port", 65536), "port must be in 0..65535, got 65536"),
                arguments(new JsonObject().put("port", -1), "port must be in 0..65535, got -1"),
                arguments(new JsonObject().put("port", "80"), "port must be an integer, got \"80\" (String)"),
                arguments(new JsonObject().put("memberPort", 0), "memberPort must be in 1..65535, got 0"),
                arguments(new JsonObject().put("members", new JsonArray()), "members must list at least one"),
                arguments(new JsonObject().put("members", new JsonArray().add("db.local:5701")), "members must be an IP address"),
                arguments(new JsonObject().put("members", new JsonArray().add("10.0.0.1:x")), "has a port that is not a number"),
                arguments(new JsonObject().put("members", new JsonArray().add("10.0.0.1:70000")), "has a port outside 1..65535"),
                arguments(new JsonObject().put("members", "10.0.0.1"), "members must be a list of strings, got \"10.0.0.1\" (String)"),
                arguments(new JsonObject().put("quorum", 0), "quorum must be in 1..64, got 0"),
                arguments(new JsonObject().put("quorum", 65), "quorum must be in 1..64, got 65"),
                arguments(new JsonObject().put("keyStore", " "), "keyStore must not be blank"));
    }

    @ParameterizedTest
    @MethodSource("badJson")
    void refusesABadValueNamingIt(JsonObject json, String message) {
        assertThatThrownBy(() -> new ClusterNodeOptions(json)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void aSetterRefusingAValueChangesNothing() {
        ClusterNodeOptions options = new ClusterNodeOptions().setHost("10.0.0.7");
        assertThatThrownBy(() -> options.setHost("not-an-ip")).isInstanceOf(IllegalArgumentException.class);
        assertThat(options.getHost()).isEqualTo("10.0.0.7");
    }

    @Test
    void refusesInTheWordsOfEveryOtherOptionSource() {
        String cache = catchThrowable(() -> new KvCacheOptions(new JsonObject().put("sendTimeoutMs", "80"))).getMessage();
        String worker = catchThrowable(() -> new RankWorkerOptions(new JsonObject().put("sendTimeoutMs", "80"))).getMessage();
        String node = catchThrowable(() -> new ClusterNodeOptions(new JsonObject().put("port", "80"))).getMessage();
        assertThat(node).isEqualTo(cache.replace("sendTimeoutMs", "port")).isEqualTo(worker.replace("sendTimeoutMs", "port"));
        String cacheRange = catchThrowable(() -> new RankWorkerOptions().setLeaseGraceMs(-1L)).getMessage();
        assertThat(catchThrowable(() -> new ClusterNodeOptions().setPort(-1)).getMessage())
                .isEqualTo(cacheRange.replace("leaseGraceMs", "port").replace("3600000", "65535"));
    }

    @Test
    void tlsNeedsItsPasswordsAndAKey() {
        assertThatThrownBy(() -> new ClusterNodeOptions().setKeyStore("node.p12").validate())
                .hasMessageContaining("keyStorePassword is required");
        assertThatThrownBy(() -> new ClusterNodeOptions().setTrustStore("ca.p12").setTrustStorePassword("p").validate())
                .hasMessageContaining("without keyStore");
        assertThatThrownBy(() -> new ClusterNodeOptions().setKeyStore("node.p12").setKeyStorePassword("p").setTrustStore("ca.p12").validate())
                .hasMessageContaining("trustStorePassword is required");
        assertThatThrownBy(() -> new ClusterNodeOptions().setKeyStore("node.p12").setKeyStorePassword("p").validate())
                .hasMessageContaining("clusterSecret is required with keyStore node.p12")
                .hasMessageContaining("every node hands its certificate to anyone who opens its event-bus port");
        assertThatThrownBy(() -> new ClusterNodeOptions().setClusterSecret("too short"))
                .hasMessageContaining("the cluster secret must be at least 16 bytes, got 9");
    }

    @Test
    void aNodeWithAKeyStoreItCannotReadDoesNotStart() {
        Throwable failure = ClusterNode.start(new ClusterNodeOptions().setKeyStore("target/no-such.p12").setKeyStorePassword("p")
                .setClusterSecret("the-cluster-secret-0123")).cause();
        assertThat(failure).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no-such.p12");
    }
}
