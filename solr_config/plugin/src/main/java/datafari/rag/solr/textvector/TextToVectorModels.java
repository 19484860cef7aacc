package datafari.rag.solr.textvector;

import org.apache.solr.core.SolrCore;

/** The models of a core's text-to-vector store, for other plugins that embed texts. */
public final class TextToVectorModels {

  private TextToVectorModels() {}

  /** The named model of the core's store, or a clear error naming the store. */
  public static TextToVectorModel require(SolrCore core, String name) {
    return ManagedModelStore.require(ManagedModelStore.of(core), name);
  }
}
