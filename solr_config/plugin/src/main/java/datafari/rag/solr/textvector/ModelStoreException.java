package datafari.rag.solr.textvector;

/** A model-store entry that cannot be turned into a working embedding model. */
public class ModelStoreException extends RuntimeException {
  public ModelStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
