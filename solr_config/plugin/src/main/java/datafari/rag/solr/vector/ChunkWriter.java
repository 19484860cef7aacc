package datafari.rag.solr.vector;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.solr.client.solrj.SolrServerException;
import org.apache.solr.client.solrj.impl.CloudSolrClient;
import org.apache.solr.client.solrj.request.UpdateRequest;
import org.apache.solr.client.solrj.util.ClientUtils;
import org.apache.solr.common.SolrDocument;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.cloud.DocCollection;
import org.apache.solr.common.cloud.Slice;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.params.ShardParams;

/**
 * Writes a parent's chunks to the chunks' collection (VectorMain) through SolrCloud, so that they
 * reach that collection's shard leader and replicas wherever they live. VectorMain routes on {@code
 * parent_doc}, so a parent's chunks share one shard; real-time gets name that shard.
 */
final class ChunkWriter {
  static final String PARENT = ChunkFields.PARENT;
  static final String INDEX = ChunkFields.INDEX;
  static final String COUNT = ChunkFields.COUNT;
  private static final int IDS_PER_DELETE = 500;

  private final CloudSolrClient client;
  private final String collection;

  ChunkWriter(CloudSolrClient client, String collection) {
    this.client = client;
    this.collection = collection;
  }

  /**
   * Writes the new chunks of these parents in one request, and deletes those longer versions of
   * them left (their previous chunk count read by real-time get, so uncommitted chunks count).
   */
  void replace(List<Map.Entry<String, List<SolrInputDocument>>> parents, int commitWithin)
      throws IOException, SolrServerException {
    Map<String, Integer> previous =
        previousCounts(parents.stream().map(Map.Entry::getKey).toList());
    UpdateRequest update = new UpdateRequest();
    update.setCommitWithin(commitWithin);
    for (Map.Entry<String, List<SolrInputDocument>> entry : parents) {
      String parentId = entry.getKey();
      List<SolrInputDocument> chunks = entry.getValue();
      if (!chunks.isEmpty()) {
        update.add(chunks);
      }
      Integer count = previous.getOrDefault(parentId, 0);
      if (count == null) {
        update.deleteByQuery(
            PARENT
                + ":"
                + ClientUtils.escapeQueryChars(parentId)
                + " AND "
                + INDEX
                + ":["
                + chunks.size()
                + " TO *]");
      } else {
        for (int i = chunks.size(); i < count; i++) {
          update.deleteById(parentId + "_" + i, parentId);
        }
      }
    }
    boolean empty =
        update.getDocuments() == null
            && update.getDeleteById() == null
            && update.getDeleteQuery() == null;
    if (!empty) {
      update.process(client, collection);
    }
  }

  /**
   * How many chunks the versions VectorMain holds have, by parent: absent when it holds none, null
   * when a chunk 0 carries no count (an older writer's; its surplus is then deleted by query).
   *
   * <p>One real-time get per shard, naming the shard ({@code shards}) rather than a route: a get
   * with a {@code _route_} other than the id makes Solr open a new real-time searcher, hence a new
   * segment, every time (RealTimeGetComponent, SOLR-15064) — one per document, and then merges.
   */
  private Map<String, Integer> previousCounts(List<String> parentIds)
      throws IOException, SolrServerException {
    Map<String, Integer> counts = new HashMap<>();
    if (parentIds.isEmpty()) {
      return counts;
    }
    DocCollection coll = client.getClusterStateProvider().getCollection(collection);
    if (coll == null) {
      throw new SolrException(ErrorCode.SERVICE_UNAVAILABLE, "Collection not found: " + collection);
    }
    Map<String, List<String>> bySlice = new HashMap<>();
    for (String parentId : parentIds) {
      String first = parentId + "_0";
      Slice slice = coll.getRouter().getTargetSlice(first, null, parentId, null, coll);
      bySlice.computeIfAbsent(slice.getName(), k -> new ArrayList<>()).add(first);
    }
    for (Map.Entry<String, List<String>> entry : bySlice.entrySet()) {
      ModifiableSolrParams params = new ModifiableSolrParams();
      params.set(ShardParams.SHARDS, entry.getKey());
      params.set("fl", PARENT + "," + COUNT);
      for (SolrDocument first : client.getById(collection, entry.getValue(), params)) {
        Object count = first.getFirstValue(COUNT);
        counts.put(
            String.valueOf(first.getFirstValue(PARENT)),
            count instanceof Number ? ((Number) count).intValue() : null);
      }
    }
    return counts;
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
