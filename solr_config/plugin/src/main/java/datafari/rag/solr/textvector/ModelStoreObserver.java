package datafari.rag.solr.textvector;

import java.io.IOException;
import org.apache.lucene.util.ResourceLoader;
import org.apache.lucene.util.ResourceLoaderAware;
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

  TextToVectorModel require(String name) {
    return ManagedModelStore.require(store, name);
  }
}
