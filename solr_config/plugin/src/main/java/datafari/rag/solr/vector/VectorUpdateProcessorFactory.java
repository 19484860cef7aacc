package datafari.rag.solr.vector;

import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.core.SolrCore;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.update.processor.DistributedUpdateProcessor.DistribPhase;
import org.apache.solr.update.processor.DistributingUpdateProcessorFactory;
import org.apache.solr.update.processor.UpdateRequestProcessor;
import org.apache.solr.update.processor.UpdateRequestProcessorFactory;

/**
 * FileShare's chunk-and-embed processor: every add, atomic update and delete that reaches
 * FileShare, from any client, is reflected in the chunks' collection (VectorMain) in the same
 * request. Placed after the distributed processor, it sees an atomic update as the whole merged
 * document, and it works on the shard leader only (replicas receive the parent, VectorMain's own
 * replicas receive the chunks). The chunks of a request's documents are embedded together, in
 * batches of about {@code batchChunks} texts (one embedding call per document would leave the
 * embedding service mostly idle on short documents), and written before the request answers and
 * before any delete or commit in it. If the embedding service or VectorMain fails, the request
 * fails with a 503 naming the documents, whose previous chunks are deleted; the caller sends them
 * again, or {@code reconcile} completes them. Two requests writing the same parent take turns
 * ({@link ParentLocks}): the chunks always belong to the parent's last version.
 *
 * <p>Settings are Datafari's {@code vector.*} user properties (Config API {@code
 * set-user-property}), substituted into this processor's arguments in solrconfig.xml, each one
 * required ({@link ChunkSettings}); the work of a request is {@link VectorUpdateProcessor}'s.
 */
public class VectorUpdateProcessorFactory extends UpdateRequestProcessorFactory {
  private ChunkSettings settings;
  private Chunker chunker;
  private final ChunkClient client = new ChunkClient();

  @Override
  public void init(NamedList<?> args) {
    settings = ChunkSettings.of(args.toSolrParams().required());
  }

  @Override
  public UpdateRequestProcessor getInstance(
      SolrQueryRequest req, SolrQueryResponse rsp, UpdateRequestProcessor next) {
    if (!settings.enabled() || !leads(req)) {
      return next;
    }
    if (req.getCoreContainer().getZkController() == null) {
      throw new SolrException(
          ErrorCode.SERVER_ERROR, "The chunk-and-embed processor needs SolrCloud");
    }
    if (req.getSchema().getFieldOrNull(settings.textField()) == null) {
      throw new SolrException(
          ErrorCode.SERVER_ERROR,
          "The chunk-and-embed processor's textField "
              + settings.textField()
              + " is not a field of this collection");
    }
    SolrCore core = req.getCore();
    ChunkWriter writer = new ChunkWriter(client.of(core), settings.collection());
    return new VectorUpdateProcessor(req, writer, settings, chunker(core), next);
  }

  /** The chunker, made at the first write (its model tokenizer is the core's resource). */
  private synchronized Chunker chunker(SolrCore core) {
    if (chunker == null) {
      ChunkSettings s = settings;
      ModelTokenizer tokens =
          s.tokens() ? ModelTokenizer.of(core.getResourceLoader(), s.tokenizer()) : null;
      chunker =
          new Chunker(
              s.splitter(),
              s.chunkSize(),
              s.maxOverlap(),
              tokens,
              s.minLength(),
              s.minAlnumRatio());
    }
    return chunker;
  }

  /** False on a replica receiving its leader's copy: the leader has done the work already. */
  private static boolean leads(SolrQueryRequest req) {
    return DistribPhase.parseParam(
            req.getParams().get(DistributingUpdateProcessorFactory.DISTRIB_UPDATE_PARAM))
        != DistribPhase.FROMLEADER;
  }
}
