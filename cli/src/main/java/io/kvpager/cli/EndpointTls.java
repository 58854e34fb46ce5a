package io.kvpager.cli;

import io.kvpager.cluster.ClusterNodeOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.JksOptions;
import io.vertx.core.net.KeyStoreOptionsBase;
import io.vertx.core.net.PfxOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Locale;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS of a node's HTTP endpoint and of its clients, from the stores the event bus uses: the node
 * serves HTTPS with its key store and asks every client for a certificate its trust store vouches
 * for (the {@code /cluster/*} routes refuse a client without one, {@code /metrics} and
 * {@code /health} answer it); a client ({@code status}, {@code limit}, {@code top --cluster})
 * presents its key store and checks the node's chain against its trust store. As on the event bus,
 * the chain is checked, not the host name, so one certificate may serve every node.
 */
final class EndpointTls {

    private EndpointTls() {
    }

    /** The server options of a node's endpoint: HTTPS, a client certificate asked for, or plain HTTP without TLS. */
    static HttpServerOptions serverOptions(ClusterNodeOptions options) {
        HttpServerOptions server = new HttpServerOptions();
        if (!options.isTls()) {
            return server;
        }
        KeyStoreOptionsBase key = store(options.getKeyStore(), options.getKeyStorePassword());
        KeyStoreOptionsBase trust = options.getTrustStore() == null ? key : store(options.getTrustStore(), options.getTrustStorePassword());
        // asked, not required, so that a Prometheus scrape and a health probe need no certificate; the admin routes check it
        return server.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setClientAuth(ClientAuth.REQUEST);
    }

    /**
     * A client's TLS: its key from {@code keyStore}, the nodes it trusts from {@code trustStore}.
     *
     * @throws IllegalArgumentException when a store does not read with its password
     */
    static SSLContext clientContext(String keyStore, String keyPassword, String trustStore, String trustPassword) {
        try {
            KeyStore own = load(keyStore, keyPassword, "--tls-key-store");
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(own, keyPassword.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            // a PKCS12 load checks the store's MAC with 10,000 PBKDF2 rounds, a third of a second in a fresh JVM: once is enough
            trust.init(trustStore.equals(keyStore) ? own : load(trustStore, trustPassword, "--tls-trust-store"));
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot set up TLS with " + keyStore + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String path, String password, String flag) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(type(path));
            store.load(in, password.toCharArray());
            return store;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(flag + ": cannot read " + path + " with its password: " + e.getMessage(), e);
        }
    }

    private static KeyStoreOptionsBase store(String path, String password) {
        return "JKS".equals(type(path)) ? new JksOptions().setPath(path).setPassword(password)
                : new PfxOptions().setPath(path).setPassword(password);
    }

    private static String type(String path) {
        return path.toLowerCase(Locale.ROOT).endsWith(".jks") ? "JKS" : "PKCS12";
    }
}
