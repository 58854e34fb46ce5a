package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;

/** A client socket offers X25519 alone, however it is made, and keeps the context's other parameters. */
class ClientSocketsTest {

    @Test
    void everySocketOffersX25519Alone() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, null, null);
        assertThat(context.getDefaultSSLParameters().getNamedGroups()).as("the JDK's own offer").contains("x25519", "secp256r1");
        ClientSockets sockets = new ClientSockets(context.getSocketFactory());
        try (ServerSocket server = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
             SSLSocket unconnected = (SSLSocket) sockets.createSocket();
             SSLSocket connected = (SSLSocket) sockets.createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket plain = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             SSLSocket layered = (SSLSocket) sockets.createSocket(plain, "127.0.0.1", server.getLocalPort(), true)) {
            for (SSLSocket socket : new SSLSocket[] {unconnected, connected, layered}) {
                assertThat(socket.getSSLParameters().getNamedGroups()).containsExactly(ClientSockets.GROUP);
                assertThat(socket.getEnabledCipherSuites()).containsExactlyInAnyOrder(context.getSocketFactory().getDefaultCipherSuites());
            }
        }
    }
}
