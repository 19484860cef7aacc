package datafari.rag.solr.textvector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.core.SolrCore;
import org.apache.solr.core.SolrResourceLoader;
import org.apache.solr.rest.BaseSolrResource;
import org.apache.solr.rest.ManagedResource;
import org.apache.solr.rest.ManagedResourceObserver;
import org.apache.solr.rest.ManagedResourceStorage;

/**
 * The text-to-vector model store, a Solr managed resource at {@value #REST_END_POINT}: PUT a model
 * JSON ({@code class}, {@code name}, {@code params}) or a list of them, GET lists them, DELETE
 * {@code .../NAME} removes one. In SolrCloud the store is saved in ZooKeeper with the configset.
 */
public class ManagedModelStore extends ManagedResource
    implements ManagedResource.ChildResourceSupport {

  public static final String REST_END_POINT = "/schema/text-to-vector-model-store";

  private final Map<String, TextToVectorModel> models = new ConcurrentHashMap<>();
  private Object storedData;

  public ManagedModelStore(
      String resourceId, SolrResourceLoader loader, ManagedResourceStorage.StorageIO storageIO) {
    super(resourceId, loader, storageIO);
  }

  static void register(SolrResourceLoader loader, ManagedResourceObserver observer) {
    loader
        .getManagedResourceRegistry()
        .registerManagedResource(REST_END_POINT, ManagedModelStore.class, observer);
  }

  /** The store of a core; it exists once the knn_text_to_vector query parser is declared. */
  static ManagedModelStore of(SolrCore core) {
    try {
      return (ManagedModelStore) core.getRestManager().getManagedResource(REST_END_POINT);
    } catch (SolrException e) {
      throw new SolrException(
          ErrorCode.SERVER_ERROR,
          "No text-to-vector model store: declare the knn_text_to_vector query parser in solrconfig.xml",
          e);
    }
  }

  /** The model by name, or an error that names the store when it is absent. */
  static TextToVectorModel require(ManagedModelStore store, String name) {
    TextToVectorModel model = store == null ? null : store.getModel(name);
    if (model == null) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST,
          "The model requested '" + name + "' can't be found in the store: " + REST_END_POINT);
    }
    return model;
  }

  @Override
  protected ManagedResourceStorage createStorage(
      ManagedResourceStorage.StorageIO storageIO, SolrResourceLoader loader) {
    return new ManagedResourceStorage.JsonStorage(storageIO, loader, -1);
  }

  @Override
  protected void onManagedDataLoadedFromStorage(NamedList<?> initArgs, Object managedData) {
    models.clear();
    storedData = managedData;
  }

  /** Builds the models read from storage; called once observers are registered. */
  void loadStoredModels() {
    if (storedData instanceof List) {
      for (Object entry : (List<?>) storedData) {
        add(entry);
      }
    }
  }

  TextToVectorModel getModel(String name) {
    return models.get(name);
  }

  @Override
  protected Object applyUpdatesToManagedData(Object updates) {
    if (updates instanceof List) {
      for (Object entry : (List<?>) updates) {
        add(entry);
      }
    } else if (updates instanceof Map) {
      add(updates);
    }
    List<Object> all = new ArrayList<>();
    for (TextToVectorModel model : models.values()) {
      all.add(model.toMap());
    }
    return all;
  }

  @SuppressWarnings("unchecked")
  private void add(Object entry) {
    if (!(entry instanceof Map)) {
      throw new SolrException(ErrorCode.BAD_REQUEST, "A model must be a JSON object");
    }
    Map<String, Object> map = (Map<String, Object>) entry;
    Object name = map.get("name");
    Object className = map.get("class");
    if (!(name instanceof String) || !(className instanceof String)) {
      throw new SolrException(ErrorCode.BAD_REQUEST, "A model needs a 'name' and a 'class'");
    }
    Map<String, Object> params = (Map<String, Object>) map.get("params");
    try {
      models.put(
          (String) name,
          new TextToVectorModel(
              (String) name,
              (String) className,
              params,
              EmbeddingModelFactory.build(solrResourceLoader, (String) className, params)));
    } catch (ModelStoreException e) {
      throw new SolrException(ErrorCode.BAD_REQUEST, e.getMessage(), e);
    }
  }

  @Override
  public void doDeleteChild(BaseSolrResource endpoint, String childId) {
    if (models.remove(childId) == null) {
      throw new SolrException(ErrorCode.NOT_FOUND, "No model named '" + childId + "' in the store");
    }
    storeManagedData(applyUpdatesToManagedData(null));
  }

  @Override
  public void doGet(BaseSolrResource endpoint, String childId) {
    endpoint.getSolrResponse().add("models", applyUpdatesToManagedData(null));
  }
}
