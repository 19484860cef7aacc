package datafari.rag.solr.vector;

import org.apache.solr.SolrTestCase;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.request.LocalSolrQueryRequest;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.update.processor.DistributedUpdateProcessor.DistribPhase;
import org.apache.solr.update.processor.DistributingUpdateProcessorFactory;
import org.junit.Test;

/**
 * The status of a chunk-and-embed failure: 503 to a client, 500 on a batch another node forwarded
 * to this shard leader (Solr's distributor would retry a 503 with one document of the batch only).
 */
public class FailureStatusTest extends SolrTestCase {

  private static SolrQueryRequest request(String phase) {
    ModifiableSolrParams params = new ModifiableSolrParams();
    if (phase != null) {
      params.set(DistributingUpdateProcessorFactory.DISTRIB_UPDATE_PARAM, phase);
    }
    return new LocalSolrQueryRequest(null, params);
  }

  @Test
  public void aClientsRequestGets503() {
    try (SolrQueryRequest req = request(null)) {
      assertEquals(ErrorCode.SERVICE_UNAVAILABLE, VectorUpdateProcessor.busy(req));
    }
  }

  @Test
  public void aForwardedBatchGets500WhichSolrDoesNotRetry() {
    try (SolrQueryRequest req = request(DistribPhase.TOLEADER.toString())) {
      assertEquals(ErrorCode.SERVER_ERROR, VectorUpdateProcessor.busy(req));
    }
  }
}
