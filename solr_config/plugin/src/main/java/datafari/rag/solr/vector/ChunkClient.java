package datafari.rag.solr.vector;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.solr.client.solrj.impl.CloudHttp2SolrClient;
import org.apache.solr.client.solrj.impl.CloudSolrClient;
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
 */
final class ChunkClient {
  private CloudSolrClient current;
  private Object authentication;
  private final List<CloudSolrClient> retired = new ArrayList<>();

  synchronized CloudSolrClient of(SolrCore core) {
    CoreContainer container = core.getCoreContainer();
    Object now = container.getAuthenticationPlugin();
    if (current == null || now != authentication) {
      CloudSolrClient old = current;
      current =
          new CloudHttp2SolrClient.Builder(
                  List.of(container.getZkController().getZkServerAddress()), Optional.empty())
              .withHttpClient(container.getDefaultHttpSolrClient())
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
      }
    }
    return current;
  }

  private synchronized void close() {
    retired.forEach(IOUtils::closeQuietly);
    retired.clear();
    IOUtils.closeQuietly(current);
    current = null;
  }
}
