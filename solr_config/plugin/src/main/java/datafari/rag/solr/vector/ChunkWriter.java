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
    int previous = previousCount(parentId);
    UpdateRequest update = new UpdateRequest();
    update.setCommitWithin(commitWithin);
    if (chunks.isEmpty()) {
      update.deleteByQuery(PARENT + ":" + ClientUtils.escapeQueryChars(parentId));
    } else {
      update.add(chunks);
      if (previous == Integer.MAX_VALUE) {
        update.deleteByQuery(
            PARENT + ":" + ClientUtils.escapeQueryChars(parentId)
                + " AND " + INDEX + ":[" + chunks.size() + " TO *]");
      }
      for (int i = chunks.size(); i < previous && previous != Integer.MAX_VALUE; i++) {
        update.deleteById(parentId + "_" + i, parentId);
      }
    }
    update.process(client, collection);
  }

  /** The chunk count of the version VectorMain holds now (0 when it holds none). */
  private int previousCount(String parentId) throws IOException, SolrServerException {
    ModifiableSolrParams params = new ModifiableSolrParams();
    params.set(ShardParams._ROUTE_, parentId);
    params.set("fl", "id," + COUNT);
    SolrDocument first = client.getById(collection, parentId + "_0", params);
    if (first == null) {
      return 0;
    }
    Object count = first.getFirstValue(COUNT);
    // A chunk 0 without a count comes from an older writer: delete by query instead.
    return count instanceof Number ? ((Number) count).intValue() : Integer.MAX_VALUE;
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
