package datafari.rag.solr.textvector;

import java.io.IOException;
import org.apache.lucene.util.ResourceLoader;
import org.apache.lucene.util.ResourceLoaderAware;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.core.SolrResourceLoader;
import org.apache.solr.rest.ManagedResource;
import org.apache.solr.rest.ManagedResourceObserver;

/** Gives a plugin access to the core's model store, registering the store when needed. */
final class ModelStoreObserver implements ResourceLoaderAware, ManagedResourceObserver {
  private volatile ManagedModelStore store;

  @Override
  public void inform(ResourceLoader loader) throws IOException {
    ManagedModelStore.register((SolrResourceLoader) loader, this);
  }

  @Override
  public void onManagedResourceInitialized(NamedList<?> args, ManagedResource res) {
    if (res instanceof ManagedModelStore) {
      store = (ManagedModelStore) res;
      store.loadStoredModels();
    }
  }

  /** The model by name, or a 400 that names the store when it is absent. */
  TextToVectorModel require(String name) {
    TextToVectorModel model = store == null ? null : store.getModel(name);
    if (model == null) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST,
          "The model requested '"
              + name
              + "' can't be found in the store: "
              + ManagedModelStore.REST_END_POINT);
    }
    return model;
  }
}
