package datafari.rag.solr.vector;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.solr.client.solrj.impl.CloudHttp2SolrClient;
import org.apache.solr.client.solrj.impl.CloudSolrClient;
import org.apache.solr.client.solrj.impl.Http2SolrClient;
import org.apache.solr.common.util.IOUtils;
import org.apache.solr.core.CloseHook;
import org.apache.solr.core.CoreContainer;
import org.apache.solr.core.SolrCore;

/**
 * The client that writes the chunks, made again whenever Solr's authentication changes: Solr signs
 * its own requests between nodes (PKI) only in clients made after the authentication plugin was
 * installed, so a client made earlier would be refused once {@code security.json} arrives on a
 * running Solr. Replaced clients stay open (requests under way may still use them) until the core
 * closes.
 *
 * <p>Its requests give up after {@link #IDLE_SECONDS} without a byte: a chunk write embeds nothing
 * (its vectors are made before it is sent) and answers in well under a second, so a longer silence
 * means a node that froze (cut off the network, stopped), not one that is busy. Solr's own client
 * waits {@code distribUpdateSoTimeout} (ten minutes by default), all the while holding the parents'
 * locks, which a resend of the same documents then waits for.
 */
final class ChunkClient {
  /**
   * Seconds a chunk write or delete may stay silent before it fails (and the parents are freed).
   */
  static final long IDLE_SECONDS = 15;

  private CloudSolrClient current;
  private Http2SolrClient http;
  private Object authentication;
  private final List<AutoCloseable> retired = new ArrayList<>();

  synchronized CloudSolrClient of(SolrCore core) {
    CoreContainer container = core.getCoreContainer();
    Object now = container.getAuthenticationPlugin();
    if (current == null || now != authentication) {
      CloudSolrClient old = current;
      Http2SolrClient oldHttp = http;
      // Solr's HTTP client (its connections, and the listeners that sign requests between nodes),
      // with timeouts of its own
      http =
          new Http2SolrClient.Builder()
              .withIdleTimeout(IDLE_SECONDS, TimeUnit.SECONDS)
              .withRequestTimeout(4 * IDLE_SECONDS, TimeUnit.SECONDS)
              .withHttpClient(container.getDefaultHttpSolrClient())
              .build();
      current =
          new CloudHttp2SolrClient.Builder(
                  List.of(container.getZkController().getZkServerAddress()), Optional.empty())
              .withHttpClient(http)
              .build();
      authentication = now;
      if (old == null) {
        core.addCloseHook(
            new CloseHook() {
              @Override
              public void postClose(SolrCore closed) {
                close();
              }
            });
      } else {
        retired.add(old);
        retired.add(oldHttp);
      }
    }
    return current;
  }

  private synchronized void close() {
    retired.forEach(IOUtils::closeQuietly);
    retired.clear();
    IOUtils.closeQuietly(current);
    IOUtils.closeQuietly(http);
    current = null;
    http = null;
  }
}
