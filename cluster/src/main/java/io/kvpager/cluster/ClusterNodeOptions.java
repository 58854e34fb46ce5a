package io.kvpager.cluster;

import io.kvpager.internal.options.OptionRules;
import io.kvpager.internal.options.OptionTable;
import io.kvpager.internal.options.OptionReader;
import io.kvpager.internal.options.OptionRules;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.net.InetAddress;
import java.util.List;

import static io.kvpager.internal.options.OptionType.INT;
import static io.kvpager.internal.options.OptionType.STRING;
import static io.kvpager.internal.options.OptionType.STRING_LIST;

/**
 * How a clustered kvpager node joins its cluster: the cluster's name, the address it binds (its
 * event bus and its Hazelcast member both), its ports, the members it joins through, the Hazelcast
 * config file, the key store that turns TLS on for the event bus, and the cluster's secret.
 *
 * <p>A data object: fluent setters that reject a bad value at once with an
 * {@link IllegalArgumentException} naming the field, a {@link JsonObject} constructor that rejects
 * unknown keys, and {@link #toJson()}.
 *
 * <pre>{@code
 * {"clusterName": "llama-prod", "host": "127.0.0.1", "port": 0, "memberPort": 5701,
 *  "members": ["127.0.0.1:5701"], "quorum": 2, "config": "config/cluster.xml",
 *  "keyStore": "node.p12", "keyStorePassword": "...", "trustStore": "cluster.p12", "trustStorePassword": "...",
 *  "clusterSecret": "..."}
 * }</pre>
 */
@DataObject
public class ClusterNodeOptions {

    public static final String DEFAULT_CLUSTER_NAME = "kvpager";
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_MEMBER_PORT = 5701;
    /** The most a quorum may ask: kvpager clusters are a few nodes per cache deployment. */
    public static final int MAX_QUORUM = 64;

    /** Every option: its JSON key and type, its getter and setter (which holds its rule); the JSON constructor and {@link #toJson()} read it. */
    private static final OptionTable<ClusterNodeOptions> OPTIONS = OptionTable.<ClusterNodeOptions>of("cluster option", OptionTable.MISTYPED)
            .add("clusterName", STRING, ClusterNodeOptions::getClusterName, ClusterNodeOptions::setClusterName)
            .add("host", STRING, ClusterNodeOptions::getHost, ClusterNodeOptions::setHost)
            .add("port", INT, ClusterNodeOptions::getPort, ClusterNodeOptions::setPort)
            .add("memberPort", INT, ClusterNodeOptions::getMemberPort, ClusterNodeOptions::setMemberPort)
            .add("members", STRING_LIST, ClusterNodeOptions::getMembers, ClusterNodeOptions::setMembers)
            .add("quorum", INT, ClusterNodeOptions::getQuorum, ClusterNodeOptions::setQuorum)
            .add("config", STRING, ClusterNodeOptions::getConfig, ClusterNodeOptions::setConfig)
            .add("keyStore", STRING, ClusterNodeOptions::getKeyStore, ClusterNodeOptions::setKeyStore)
            .add("keyStorePassword", STRING, ClusterNodeOptions::getKeyStorePassword, ClusterNodeOptions::setKeyStorePassword)
            .add("trustStore", STRING, ClusterNodeOptions::getTrustStore, ClusterNodeOptions::setTrustStore)
            .add("trustStorePassword", STRING, ClusterNodeOptions::getTrustStorePassword, ClusterNodeOptions::setTrustStorePassword)
            .add("clusterSecret", STRING, ClusterNodeOptions::getClusterSecret, ClusterNodeOptions::setClusterSecret);

    private String clusterName = DEFAULT_CLUSTER_NAME;
    private String host = DEFAULT_HOST;
    private int port;
    private int memberPort = DEFAULT_MEMBER_PORT;
    private List<String> members = List.of(DEFAULT_HOST);
    private int quorum = 1;
    private String config;
    private String keyStore;
    private String keyStorePassword;
    private String trustStore;
    private String trustStorePassword;
    private String clusterSecret;

    public ClusterNodeOptions() {
    }

    public ClusterNodeOptions(ClusterNodeOptions other) {
        this(other.toJson());
    }

    /**
     * Reads options from JSON; missing keys keep their defaults.
     *
     * @throws IllegalArgumentException for an unknown key or a bad value, naming it
     */
    public ClusterNodeOptions(JsonObject json) {
        OPTIONS.read(this, json);
    }

    public JsonObject toJson() {
        return OPTIONS.toJson(this);
    }

    /**
     * Checks what one setter cannot: a key store needs its password, and so does a trust store;
     * TLS needs the cluster secret, since the certificates it checks are public.
     *
     * @return this
     */
    public ClusterNodeOptions validate() {
        if (keyStore != null && keyStorePassword == null) {
            throw new IllegalArgumentException("keyStorePassword is required with keyStore " + keyStore);
        }
        if (trustStore != null && keyStore == null) {
            throw new IllegalArgumentException("trustStore " + trustStore + " is set without keyStore: TLS needs this node's own key too");
        }
        if (trustStore != null && trustStorePassword == null) {
            throw new IllegalArgumentException("trustStorePassword is required with trustStore " + trustStore);
        }
        if (keyStore != null && clusterSecret == null) {
            throw new IllegalArgumentException("clusterSecret is required with keyStore " + keyStore + ": every node hands its"
                    + " certificate to anyone who opens its event-bus port, so the certificates alone would let a stranger join the"
                    + " membership and write the cluster's shared records; give every node the same secret of at least "
                    + ClusterSecret.MIN_BYTES + " bytes");
        }
        return this;
    }

    public String getClusterName() {
        return clusterName;
    }

    /**
     * The cluster to join; nodes with another name never see each other. Give each cache
     * deployment its own, so that unrelated deployments on one network never join.
     */
    public ClusterNodeOptions setClusterName(String clusterName) {
        this.clusterName = OptionRules.clusterName("clusterName", clusterName);
        return this;
    }

    public String getHost() {
        return host;
    }

    /** The IP address of this machine that the node's event bus and Hazelcast member bind to. */
    public ClusterNodeOptions setHost(String host) {
        this.host = ipLiteral("host", host);
        return this;
    }

    public int getPort() {
        return port;
    }

    /** The event bus's port; 0 for any free one. */
    public ClusterNodeOptions setPort(int port) {
        this.port = OptionRules.inRange("port", port, 0, 65535);
        return this;
    }

    public int getMemberPort() {
        return memberPort;
    }

    /** The Hazelcast member's first port; the member takes the first free one from there up. */
    public ClusterNodeOptions setMemberPort(int memberPort) {
        this.memberPort = OptionRules.inRange("memberPort", memberPort, 1, 65535);
        return this;
    }

    public List<String> getMembers() {
        return members;
    }

    /**
     * Members to join through, {@code "ip"} (ports 5701 to 5703) or {@code "ip:port"}; any one
     * member that is up is enough. Used when the config's join is TCP-IP.
     */
    public ClusterNodeOptions setMembers(List<String> members) {
        if (members == null || members.isEmpty()) {
            throw new IllegalArgumentException("members must list at least one member address, such as 127.0.0.1:5701");
        }
        for (String member : members) {
            checkMember(member);
        }
        this.members = List.copyOf(members);
        return this;
    }

    public int getQuorum() {
        return quorum;
    }

    /**
     * The fewest members a side of the cluster must have to write the records that decide memory
     * (each GPU's shares and capacity, the instance directory, the instances' limits): on a side
     * with fewer, Hazelcast refuses those writes (split-brain protection), so the smaller side of a
     * partition cannot grant, free or remove what the larger side still counts. 1 (the default)
     * turns the protection off, as a single-node cluster needs; give every node of a cluster the
     * same value, a majority of its nodes (2 for a coordinator and two workers).
     */
    public ClusterNodeOptions setQuorum(int quorum) {
        this.quorum = OptionRules.inRange("quorum", quorum, 1, MAX_QUORUM);
        return this;
    }

    public String getConfig() {
        return config;
    }

    /** A Hazelcast XML config file to use instead of the packaged {@code config/cluster.xml}; {@code null} for that one. */
    public ClusterNodeOptions setConfig(String config) {
        this.config = OptionRules.notBlank("config", config);
        return this;
    }

    public String getKeyStore() {
        return keyStore;
    }

    /**
     * This node's key and certificate (PKCS12, or JKS for a {@code .jks} file): setting it turns
     * TLS on for the event bus, with client certificates required both ways.
     */
    public ClusterNodeOptions setKeyStore(String keyStore) {
        this.keyStore = OptionRules.notBlank("keyStore", keyStore);
        return this;
    }

    public String getKeyStorePassword() {
        return keyStorePassword;
    }

    public ClusterNodeOptions setKeyStorePassword(String keyStorePassword) {
        this.keyStorePassword = keyStorePassword;
        return this;
    }

    public String getTrustStore() {
        return trustStore;
    }

    /** The certificates this node trusts; the key store's own certificate when unset. */
    public ClusterNodeOptions setTrustStore(String trustStore) {
        this.trustStore = OptionRules.notBlank("trustStore", trustStore);
        return this;
    }

    public String getTrustStorePassword() {
        return trustStorePassword;
    }

    public ClusterNodeOptions setTrustStorePassword(String trustStorePassword) {
        this.trustStorePassword = trustStorePassword;
        return this;
    }

    public String getClusterSecret() {
        return clusterSecret;
    }

    /**
     * The secret every node of the cluster holds (at least 16 bytes): the name a node joins under
     * derives from it, and the shared records that decide memory carry a MAC keyed by it, so that a
     * process without it can neither join nor forge a record. Required with TLS; without TLS it
     * still keeps strangers out of the membership and the books, though not off the event bus.
     */
    public ClusterNodeOptions setClusterSecret(String clusterSecret) {
        if (clusterSecret != null) {
            ClusterSecret.of(clusterSecret);
        }
        this.clusterSecret = clusterSecret;
        return this;
    }

    /** Whether the event bus runs over TLS. */
    public boolean isTls() {
        return keyStore != null;
    }

    @Override
    public String toString() {
        JsonObject shown = toJson();
        if (shown.containsKey("keyStorePassword")) {
            shown.put("keyStorePassword", "***");
        }
        if (shown.containsKey("trustStorePassword")) {
            shown.put("trustStorePassword", "***");
        }
        if (shown.containsKey("clusterSecret")) {
            shown.put("clusterSecret", "***");
        }
        return "ClusterNodeOptions" + shown.encode();
    }

    private static void checkMember(String member) {
        if (member == null || member.isBlank()) {
            throw new IllegalArgumentException("members: a member address must not be blank");
        }
        int colon = member.lastIndexOf(':');
        boolean bracketed = member.startsWith("[");
        // "ip", "ip:port", "[v6]:port"; a bare IPv6 address has several colons and no port
        if (colon > 0 && (bracketed || member.indexOf(':') == colon)) {
            String port = member.substring(colon + 1);
            int value;
            try {
                value = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("members: '" + member + "' has a port that is not a number");
            }
            if (value < 1 || value > 65535) {
                throw new IllegalArgumentException("members: '" + member + "' has a port outside 1..65535");
            }
            String ip = member.substring(0, colon);
            ipLiteral("members", bracketed ? ip.substring(1, ip.length() - 1) : ip);
        } else {
            ipLiteral("members", member);
        }
    }

    private static String ipLiteral(String field, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " must be an IP address, got " + (value == null ? "null" : "'" + value + "'"));
        }
        try {
            InetAddress.ofLiteral(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + " must be an IP address such as 127.0.0.1, got '" + value + "'");
        }
        return value;
    }
}
