package datafari.rag.solr.vector;

import datafari.rag.solr.textvector.TextToVectorModel;
import datafari.rag.solr.textvector.TextToVectorModels;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.lucene.search.Query;
import org.apache.solr.client.solrj.SolrServerException;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.SolrInputField;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.search.DocIterator;
import org.apache.solr.search.QParser;
import org.apache.solr.search.SolrIndexSearcher;
import org.apache.solr.update.AddUpdateCommand;
import org.apache.solr.update.CommitUpdateCommand;
import org.apache.solr.update.DeleteUpdateCommand;
import org.apache.solr.update.UpdateCommand;
import org.apache.solr.update.UpdateLog;
import org.apache.solr.update.processor.DistributedUpdateProcessor.DistribPhase;
import org.apache.solr.update.processor.DistributingUpdateProcessorFactory;
import org.apache.solr.update.processor.UpdateRequestProcessor;
import org.apache.solr.util.RefCounted;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request's chunk-and-embed work on FileShare's shard leader ({@link
 * VectorUpdateProcessorFactory} makes one per request): every add, atomic update and delete that
 * reaches FileShare, from any client, is reflected in the chunks' collection (VectorMain) before
 * the request answers. The chunks of the request's documents are embedded together, in batches of
 * about {@code batchChunks} texts, and written before any delete or commit in it. If the embedding
 * service or VectorMain fails, the request fails with a 503 naming the documents, whose previous
 * chunks are deleted; the caller sends them again, or {@code reconcile} completes them. Two
 * requests writing the same parent never wait for each other's embedding: each write claims the
 * parent, and only the newest claim's chunks are written or deleted ({@link ParentLocks}), so the
 * chunks always belong to the parent's last version and a resend never waits on its own earlier
 * attempt.
 */
final class VectorUpdateProcessor extends UpdateRequestProcessor {
  private static final Logger log = LoggerFactory.getLogger(MethodHandles.lookup().lookupClass());

  /**
   * How long a write of chunks waits for another request's write of the same parent's chunks (one
   * request to VectorMain, which the chunk client gives up after {@link ChunkClient#IDLE_SECONDS}
   * of silence).
   */
  static final long LOCK_WAIT_SECONDS = 120;

  /** The parent's field holding chunks its writer cut itself (see {@link #givenChunks}). */
  static final String GIVEN_CHUNKS = ChunkFields.GIVEN_CHUNKS;

  /** One written parent whose chunks wait for the request's next embedding batch. */
  private record Pending(
      String id, List<String> chunks, List<SolrInputDocument> docs, ParentLocks.Claim claim) {}

  private final SolrQueryRequest req;
  private final ChunkWriter writer;
  private final ChunkSettings settings;
  private final Chunker chunker;
  private final List<Pending> pending = new ArrayList<>();
  private final Set<String> pendingIds = new HashSet<>();
  private final List<ParentLocks.Claim> claims = new ArrayList<>();
  private int pendingChunks;
  private int commitWithin = -1;
  private final ErrorCode busy;

  VectorUpdateProcessor(
      SolrQueryRequest req,
      ChunkWriter writer,
      ChunkSettings settings,
      Chunker chunker,
      UpdateRequestProcessor next) {
    super(next);
    this.req = req;
    this.writer = writer;
    this.settings = settings;
    this.chunker = chunker;
    this.busy = busy(req);
  }

  @Override
  public void processAdd(AddUpdateCommand cmd) throws IOException {
    if (replayed(cmd) || cmd.isInPlaceUpdate()) {
      cmd.getSolrInputDocument().removeField(GIVEN_CHUNKS);
      super.processAdd(cmd);
      return;
    }
    String id = cmd.getPrintableId();
    if (pendingIds.contains(id)) {
      flush(); // the same document twice in one request: its versions' chunks stay in order
    }
    SolrInputDocument parent = cmd.getSolrInputDocument();
    List<String> chunks = givenChunks(parent);
    if (chunks == null) {
      chunks = chunker.split(text(parent, settings.textField()));
    }
    List<SolrInputDocument> docs = chunkDocuments(parent, id, chunks, cmd.getVersion());
    // a parent Solr refuses leaves no claim and no chunks behind
    ParentLocks.Claim claim = ParentLocks.claim(id, () -> super.processAdd(cmd));
    claims.add(claim);
    pending.add(new Pending(id, chunks, docs, claim));
    pendingIds.add(id);
    pendingChunks += chunks.size();
    if (cmd.commitWithin >= 0) {
      commitWithin = commitWithin < 0 ? cmd.commitWithin : Math.min(commitWithin, cmd.commitWithin);
    }
    if (pendingChunks >= settings.batchChunks()) {
      flush();
    }
  }

  @Override
  public void processDelete(DeleteUpdateCommand cmd) throws IOException {
    flush();
    if (replayed(cmd)) {
      super.processDelete(cmd);
      return;
    }
    Set<String> parents = new LinkedHashSet<>();
    if (cmd.isDeleteById()) {
      parents.add(cmd.getId());
    } else {
      parents.addAll(matchingIds(cmd.getQuery()));
    }
    List<ParentLocks.Claim> deleted = new ArrayList<>();
    for (String parent : parents) {
      deleted.add(ParentLocks.claim(parent, () -> {}));
    }
    claims.addAll(deleted);
    List<ReentrantLock> locks = writeLocks(deleted);
    try {
      writer.deleteParents(
          deleted.stream().filter(ParentLocks.Claim::current).map(ParentLocks.Claim::id).toList(),
          cmd.commitWithin);
    } catch (SolrServerException | IOException | RuntimeException e) {
      throw unavailable(
          busy,
          "Could not delete the chunks of the deleted documents",
          e,
          "the documents were not deleted, send the delete again");
    } finally {
      ParentLocks.unlock(locks);
    }
    super.processDelete(cmd);
  }

  @Override
  public void processCommit(CommitUpdateCommand cmd) throws IOException {
    SolrException failed = null;
    try {
      flush();
    } catch (SolrException e) {
      failed = e; // still committed: searches then see what the error describes
    }
    try {
      writer.commit(cmd.softCommit, cmd.waitSearcher);
    } catch (SolrServerException | IOException | RuntimeException e) {
      if (failed == null) {
        throw unavailable(
            busy,
            "Could not commit " + settings.collection(),
            e,
            "nothing was committed, commit again");
      }
      failed.addSuppressed(e);
    }
    super.processCommit(cmd);
    if (failed != null) {
      throw failed;
    }
  }

  @Override
  public void finish() throws IOException {
    try {
      flush();
    } finally {
      super.finish();
    }
  }

  @Override
  protected void doClose() {
    for (ParentLocks.Claim claim : claims) {
      claim.release();
    }
    claims.clear();
  }

  /**
   * The write locks of these claims' parents, for one request to VectorMain; a 503 (500 when
   * forwarded) if another request's write of the same chunks held one for {@link
   * #LOCK_WAIT_SECONDS}.
   */
  private List<ReentrantLock> writeLocks(List<ParentLocks.Claim> of) {
    List<ReentrantLock> locks = ParentLocks.writeLocks(of, LOCK_WAIT_SECONDS);
    if (locks == null) {
      throw new SolrException(
          busy,
          "The chunks of "
              + of.stream().map(ParentLocks.Claim::id).limit(10).toList()
              + " have been written by another request for "
              + LOCK_WAIT_SECONDS
              + " s; send them again");
    }
    return locks;
  }

  /**
   * Embeds the chunks of every parent written since the last flush in one call, then writes them.
   * On failure the parents stay written (Solr has acknowledged them to their replicas): their
   * previous chunks are deleted, so none outlives a changed ACL, and the error names them; the
   * caller sends them again, or {@code datafari-rag reconcile} finds them (their version matches no
   * chunk). Either way the parents' locks are released.
   */
  private void flush() {
    if (!pending.isEmpty()) {
      write();
    }
  }

  private void write() {
    List<Pending> batch = new ArrayList<>(pending);
    int within = commitWithin;
    pending.clear();
    pendingIds.clear();
    pendingChunks = 0;
    commitWithin = -1;
    try {
      embed(batch);
    } catch (RuntimeException e) {
      throw failed("Could not embed the chunks of " + names(batch), batch, within, e);
    }
    List<ReentrantLock> locks = writeLocks(batch.stream().map(Pending::claim).toList());
    try {
      // a parent written again meanwhile (a resend that overtook this request): its newer write
      // writes its chunks
      List<Map.Entry<String, List<SolrInputDocument>>> current =
          batch.stream()
              .filter(p -> p.claim().current())
              .map(p -> Map.entry(p.id(), p.docs()))
              .toList();
      writer.replace(current, within);
    } catch (SolrServerException | IOException | RuntimeException e) {
      throw failed(
          "Could not write the chunks of " + names(batch) + " to " + settings.collection(),
          batch,
          within,
          e,
          locks);
    } finally {
      ParentLocks.unlock(locks);
    }
  }

  private SolrException failed(String what, List<Pending> batch, int within, Exception e) {
    List<ReentrantLock> locks =
        ParentLocks.writeLocks(batch.stream().map(Pending::claim).toList(), LOCK_WAIT_SECONDS);
    try {
      return failed(what, batch, within, e, locks == null ? List.of() : locks);
    } finally {
      if (locks != null) {
        ParentLocks.unlock(locks);
      }
    }
  }

  /**
   * Deletes the chunks of the batch's parents this request still writes last ({@code locks} held).
   */
  private SolrException failed(
      String what, List<Pending> batch, int within, Exception e, List<ReentrantLock> locks) {
    try {
      if (!locks.isEmpty()) {
        writer.deleteParents(
            batch.stream().filter(p -> p.claim().current()).map(Pending::id).toList(), within);
      }
    } catch (SolrServerException | IOException | RuntimeException cleanup) {
      log.warn("Could not delete the previous chunks of {}: {}", names(batch), cleanup.toString());
    }
    return unavailable(
        busy,
        what,
        e,
        "the documents were written without chunks:"
            + " send them again, or run datafari-rag reconcile");
  }

  private void embed(List<Pending> batch) {
    List<String> texts = new ArrayList<>();
    for (Pending p : batch) {
      texts.addAll(p.chunks());
    }
    if (texts.isEmpty()) {
      return;
    }
    TextToVectorModel model = TextToVectorModels.require(req.getCore(), settings.modelName());
    List<float[]> vectors = model.vectoriseAll(texts);
    int next = 0;
    for (Pending p : batch) {
      for (SolrInputDocument doc : p.docs()) {
        float[] values = vectors.get(next++);
        List<Float> vector = new ArrayList<>(values.length);
        for (float v : values) {
          vector.add(v);
        }
        doc.setField(settings.vectorField(), vector);
        doc.setField(ChunkFields.HAS_VECTOR, true);
      }
    }
  }

  /** The ids of this shard's documents a delete-by-query matches, uncommitted ones included. */
  private List<String> matchingIds(String query) {
    List<String> ids = new ArrayList<>();
    UpdateLog ulog = req.getCore().getUpdateHandler().getUpdateLog();
    if (ulog != null) {
      ulog.openRealtimeSearcher(); // sees every add acknowledged so far, as Solr's own delete does
    }
    RefCounted<SolrIndexSearcher> holder = req.getCore().getRealtimeSearcher();
    try {
      SolrIndexSearcher searcher = holder.get();
      Query parsed = QParser.getParser(query, req).getQuery();
      if (parsed == null) {
        return ids;
      }
      Set<String> fields = Set.of("id");
      for (DocIterator it = searcher.getDocSet(parsed).iterator(); it.hasNext(); ) {
        ids.add(searcher.getDocFetcher().doc(it.nextDoc(), fields).get("id"));
      }
      return ids;
    } catch (Exception e) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST, "Could not run the delete query '" + query + "': " + e, e);
    } finally {
      holder.decref();
    }
  }

  private static boolean replayed(UpdateCommand cmd) {
    return (cmd.getFlags() & (UpdateCommand.REPLAY | UpdateCommand.PEER_SYNC)) != 0;
  }

  /**
   * The status of a failure that sending the same request again may cure (the embedding service or
   * VectorMain failing, a parent held by another request): 503 to a client, but 500 on a request
   * another node forwarded to this shard leader. That node's distributor retries a 503 with only
   * the one document it ties the error to, not the whole batch it streamed here: the retry would
   * succeed and the client get 200 while the batch's other parents lack their chunks. A 500 is not
   * retried: the client gets the error, naming the documents.
   */
  static ErrorCode busy(SolrQueryRequest req) {
    DistribPhase phase =
        DistribPhase.parseParam(
            req.getParams().get(DistributingUpdateProcessorFactory.DISTRIB_UPDATE_PARAM));
    return phase == DistribPhase.TOLEADER ? ErrorCode.SERVER_ERROR : ErrorCode.SERVICE_UNAVAILABLE;
  }

  /** VectorMain or the embedding service failed: an error saying what the caller should do. */
  private static SolrException unavailable(
      ErrorCode code, String what, Exception e, String advice) {
    log.error("{}: {}", what, e.toString());
    return new SolrException(code, what + " (" + e.getMessage() + "); " + advice, e);
  }

  /** "document a" or "documents a, b, c" (the first ten, then how many more). */
  private static String names(List<Pending> batch) {
    List<String> ids = batch.stream().map(Pending::id).limit(10).toList();
    String more = batch.size() > ids.size() ? " and " + (batch.size() - ids.size()) + " more" : "";
    return (batch.size() == 1 ? "document " : "documents ") + String.join(", ", ids) + more;
  }

  /** The parent's text, its values joined by lines; null when it has none. */
  static String text(SolrInputDocument parent, String textField) {
    SolrInputField field = parent.getField(textField);
    if (field == null || field.getValueCount() == 0) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    for (Object value : field.getValues()) {
      parts.add(String.valueOf(value));
    }
    return String.join("\n", parts);
  }

  /**
   * The chunks the writer cut itself (a semantic or proposition chunker, or the chunk evaluator,
   * run by the sidecar), taken as they are; the field is never stored on the parent. Null when the
   * writer sent none: this processor cuts the text.
   */
  static List<String> givenChunks(SolrInputDocument parent) {
    SolrInputField field = parent.removeField(GIVEN_CHUNKS);
    if (field == null) {
      return null;
    }
    List<String> chunks = new ArrayList<>();
    for (Object value : field.getValues()) {
      String chunk = String.valueOf(value).strip();
      if (!chunk.isEmpty()) {
        chunks.add(chunk);
      }
    }
    return chunks;
  }

  /** The chunk documents, as Datafari's VectorUpdateProcessor writes them. */
  static List<SolrInputDocument> chunkDocuments(
      SolrInputDocument parent, String parentId, List<String> chunks, long version) {
    boolean french = isFrench(parent.getFieldValue("language"));
    List<SolrInputDocument> docs = new ArrayList<>(chunks.size());
    for (int i = 0; i < chunks.size(); i++) {
      SolrInputDocument chunk = new SolrInputDocument();
      for (SolrInputField field : parent) {
        if (ChunkFields.copied(field.getName())) {
          chunk.setField(field.getName(), field.getValue());
        }
      }
      chunk.setField("id", parentId + "_" + i);
      chunk.setField(ChunkWriter.PARENT, parentId);
      chunk.setField(ChunkWriter.INDEX, i);
      chunk.setField(ChunkWriter.COUNT, chunks.size());
      if (version != 0) {
        chunk.setField(ChunkFields.PARENT_VERSION, Math.abs(version));
      }
      chunk.setField(ChunkFields.TEXT, chunks.get(i));
      chunk.setField(ChunkFields.FULL_TEXT, chunks.get(i));
      if (french) {
        chunk.setField(ChunkFields.FRENCH_TEXT, chunks.get(i));
        Object title = parent.getFieldValue("title");
        chunk.setField(ChunkFields.FRENCH_TITLE, title == null ? "" : title);
      }
      docs.add(chunk);
    }
    return docs;
  }

  private static boolean isFrench(Object language) {
    return language instanceof String
        && ((String) language).toLowerCase(Locale.ROOT).startsWith("fr");
  }
}
