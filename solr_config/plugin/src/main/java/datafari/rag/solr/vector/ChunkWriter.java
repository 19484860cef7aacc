package datafari.rag.solr.vector;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.solr.client.solrj.SolrClient;
import org.apache.solr.client.solrj.SolrServerException;
import org.apache.solr.client.solrj.request.UpdateRequest;
import org.apache.solr.client.solrj.util.ClientUtils;
import org.apache.solr.common.SolrDocument;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.params.ShardParams;

/**
 * Writes a parent's chunks to the chunks' collection (VectorMain) through SolrCloud, so that they
 * reach that collection's shard leader and replicas wherever they live. VectorMain routes on
 * {@code parent_doc}, so a parent's chunks share one shard; real-time gets name that route.
 */
final class ChunkWriter {
  static final String PARENT = "parent_doc";
  static final String INDEX = "chunk_index";
  static final String COUNT = "chunk_count";
  private static final int IDS_PER_DELETE = 500;

  private final SolrClient client;
  private final String collection;

  ChunkWriter(SolrClient client, String collection) {
    this.client = client;
    this.collection = collection;
  }

  /** Writes the new chunks of {@code parentId} and deletes those a longer version left. */
  void replace(String parentId, List<SolrInputDocument> chunks, int commitWithin)
      throws IOException, SolrServerException {
    UpdateRequest update = new UpdateRequest();
    update.setCommitWithin(commitWithin);
    String parent = PARENT + ":" + ClientUtils.escapeQueryChars(parentId);
    if (chunks.isEmpty()) {
      update.deleteByQuery(parent);
    } else {
      update.add(chunks);
      Integer previous = previousCount(parentId);
      if (previous == null) {
        update.deleteByQuery(parent + " AND " + INDEX + ":[" + chunks.size() + " TO *]");
      } else {
        for (int i = chunks.size(); i < previous; i++) {
          update.deleteById(parentId + "_" + i, parentId);
        }
      }
    }
    update.process(client, collection);
  }

  /**
   * How many chunks the version VectorMain holds has: 0 when it holds none, null when its chunk 0
   * carries no count (an older writer's; its surplus is then deleted by query).
   */
  private Integer previousCount(String parentId) throws IOException, SolrServerException {
    ModifiableSolrParams params = new ModifiableSolrParams();
    params.set(ShardParams._ROUTE_, parentId);
    params.set("fl", "id," + COUNT);
    SolrDocument first = client.getById(collection, parentId + "_0", params);
    if (first == null) {
      return 0;
    }
    Object count = first.getFirstValue(COUNT);
    return count instanceof Number ? ((Number) count).intValue() : null;
  }

  /** Deletes every chunk of these parents. */
  void deleteParents(Collection<String> parentIds, int commitWithin)
      throws IOException, SolrServerException {
    List<String> batch = new ArrayList<>();
    for (String id : parentIds) {
      batch.add(ClientUtils.escapeQueryChars(id));
      if (batch.size() == IDS_PER_DELETE) {
        deleteBatch(batch, commitWithin);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      deleteBatch(batch, commitWithin);
    }
  }

  private void deleteBatch(List<String> escapedIds, int commitWithin)
      throws IOException, SolrServerException {
    UpdateRequest update = new UpdateRequest();
    update.setCommitWithin(commitWithin);
    update.deleteByQuery(PARENT + ":(" + String.join(" OR ", escapedIds) + ")");
    update.process(client, collection);
  }

  void commit(boolean softCommit, boolean waitSearcher) throws IOException, SolrServerException {
    UpdateRequest update = new UpdateRequest();
    update.setAction(UpdateRequest.ACTION.COMMIT, true, waitSearcher, softCommit);
    update.process(client, collection);
  }
}
