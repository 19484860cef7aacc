// The interface's words in English and French; the answer's language follows the same choice.

const WORDS = {
  en: {
    language: "Language", signOut: "Sign out", signIn: "Sign in", username: "Username", password: "Password",
    chat: "Chat", usage: "Token statistics", settings: "RAG & AI configuration", workflows: "Workflows",
    noWorkflow: "No workflow yet: ai/rag runs the RAG & AI configuration. A workflow is a named pipeline with its own settings and API keys.",
    users: "Users", conversations: "Conversations", newConversation: "New conversation", rename: "Rename",
    delete: "Delete", open: "Open", question: "Your question", send: "Send", sources: "Sources",
    summarize: "Summarize", summary: "Summary", thinking: "Searching the documents…", noConversation:
    "No conversation yet: ask a question to start one.", newTitle: "New title", confirmDelete:
    "Delete this conversation?", save: "Save", saved: "Saved: applied without restart.", reset: "Back to the file's value",
    atStart: "read at start only (rag.properties)", secretSet: "set (hidden)", secretUnset: "not set",
    name: "Name", description: "Description", retrieval: "Retrieval", strategy: "Strategy", parentChild:
    "Parent-child (neighbouring chunks)", instructions: "Instructions added to the prompt", enhancers:
    "Query enhancers", filters: "Source filters (JSON, e.g. {\"extension\": [\"pdf\"]})", ranker: "Reranker",
    none: "none", topN: "Passages reranked", url: "URL", model: "Model", apiKey: "API key", path: "Folder",
    chunkSize: "Max chunk size (characters)", overlap: "Overlap (characters)", default: "Default (what ai/rag runs)",
    create: "Create", edit: "Edit", keys: "API keys", newKey: "New API key", keyName: "What the key is for",
    keyUser: "Acts as user (empty: me)", revoke: "Revoke", revoked: "revoked", keyShownOnce:
    "Copy this key now: it will not be shown again.", tryIt: "Try the workflow with an API key", ask: "Ask",
    answer: "Answer", admin: "Administrator", newPassword: "New password", makeAdmin: "Make administrator",
    removeAdmin: "Remove administrator", createUser: "Create user", total: "Total", day: "Day", model: "Model",
    answers: "Answers", promptTokens: "Prompt tokens", completionTokens: "Completion tokens", totalTokens:
    "Total tokens", user: "User", conversation: "Conversation", count: "wordings", fields: "fields", cancel: "Cancel",
    multiQuery: "Multi-query", rewrite: "Rewriting", hyde: "HyDE", selfQuery: "Self-querying",
    workflowSaved: "Workflow saved.", userSaved: "User saved.", deleted: "Deleted.", error: "Error",
    indexing: "Indexing", files: "Files (txt, md, html, pdf, docx, jsonl)", fieldsJson:
    "Fields added to each document (JSON, e.g. {\"allow_token_document\": [\"board\"]})",
    workflowId: "Workflow id (its chunker; empty: the configuration's)", startJob: "Index", progress: "Progress",
    documents: "documents", chunks: "chunks", failures: "failures", jobDone: "Indexing finished.",
    chunker: "Chunker", evaluator: "LLM evaluator (drops poor chunks)",
    threshold: "Evaluator's lowest score kept (0 to 1)", filterKeys: "Find a key",
    collection: "Own collections: <name>_FileShare and <name>_VectorMain (empty: the configuration's)",
    copy: "Copy", copied: "Copied.", regenerate: "Regenerate", stop: "Stop", stopped: "Stopped.",
    goodAnswer: "Good answer", badAnswer: "Bad answer", comment: "Comment (optional)", sendComment:
    "Save the comment", thanks: "Thank you: your rating is kept.", ratings: "Ratings of answers", ratedUp: "rated good",
    ratedDown: "rated bad", rating: "Rating", details: "Details", good: "Good", bad: "Bad", close: "Close",
    whoMayRead: "Who may read these files", onlyMe: "Only me", aGroup: "A group I belong to (its token)",
    everyone: "Everyone", groupToken: "Group token",
  },
  fr: {
    language: "Langue", signOut: "Se déconnecter", signIn: "Se connecter", username: "Identifiant",
    password: "Mot de passe", chat: "Discussion", usage: "Statistiques de jetons", settings:
    "Configuration RAG & IA", workflows: "Workflows",
    noWorkflow: "Aucun workflow : ai/rag suit la configuration RAG & IA. Un workflow est un pipeline nommé, avec ses propres réglages et clés d'API.",
    users: "Utilisateurs", conversations: "Conversations",
    newConversation: "Nouvelle conversation", rename: "Renommer", delete: "Supprimer", open: "Ouvrir",
    question: "Votre question", send: "Envoyer", sources: "Sources", summarize: "Résumer", summary: "Résumé",
    thinking: "Recherche dans les documents…", noConversation:
    "Aucune conversation : posez une question pour en commencer une.", newTitle: "Nouveau titre", confirmDelete:
    "Supprimer cette conversation ?", save: "Enregistrer", saved: "Enregistré : appliqué sans redémarrage.",
    reset: "Revenir à la valeur du fichier", atStart: "lu au démarrage seulement (rag.properties)",
    secretSet: "défini (masqué)", secretUnset: "non défini", name: "Nom", description: "Description",
    retrieval: "Recherche", strategy: "Stratégie", parentChild: "Parent-enfant (morceaux voisins)",
    instructions: "Instructions ajoutées au prompt", enhancers: "Amélioration de la requête", filters:
    "Filtres de sources (JSON, ex. {\"extension\": [\"pdf\"]})", ranker: "Reclassement", none: "aucun",
    topN: "Passages reclassés", url: "URL", model: "Modèle", apiKey: "Clé d'API", path: "Dossier",
    chunkSize: "Taille max. d'un morceau (caractères)", overlap: "Recouvrement (caractères)", default:
    "Par défaut (ce que lance ai/rag)", create: "Créer", edit: "Modifier", keys: "Clés d'API", newKey:
    "Nouvelle clé d'API", keyName: "Usage de la clé", keyUser: "Agit en tant que (vide : moi)", revoke: "Révoquer",
    revoked: "révoquée", keyShownOnce: "Copiez cette clé maintenant : elle ne sera plus affichée.", tryIt:
    "Essayer le workflow avec une clé d'API", ask: "Demander", answer: "Réponse", admin: "Administrateur",
    newPassword: "Nouveau mot de passe", makeAdmin: "Rendre administrateur", removeAdmin: "Retirer administrateur",
    createUser: "Créer l'utilisateur", total: "Total", day: "Jour", model: "Modèle", answers: "Réponses",
    promptTokens: "Jetons du prompt", completionTokens: "Jetons de la réponse", totalTokens: "Jetons au total",
    user: "Utilisateur", conversation: "Conversation", count: "formulations", fields: "champs", cancel: "Annuler",
    multiQuery: "Multi-requêtes", rewrite: "Réécriture", hyde: "HyDE", selfQuery: "Auto-filtrage",
    workflowSaved: "Workflow enregistré.", userSaved: "Utilisateur enregistré.", deleted: "Supprimé.",
    error: "Erreur",
    indexing: "Indexation", files: "Fichiers (txt, md, html, pdf, docx, jsonl)", fieldsJson:
    "Champs ajoutés à chaque document (JSON, ex. {\"allow_token_document\": [\"board\"]})",
    workflowId: "Id du workflow (son découpage ; vide : celui de la configuration)", startJob: "Indexer",
    progress: "Progression", documents: "documents", chunks: "morceaux", failures: "échecs",
    jobDone: "Indexation terminée.", chunker: "Découpage", evaluator: "Évaluateur LLM (écarte les mauvais morceaux)",
    threshold: "Note minimale gardée par l'évaluateur (0 à 1)", filterKeys: "Chercher une clé",
    collection: "Collections propres : <nom>_FileShare et <nom>_VectorMain (vide : celles de la configuration)",
    copy: "Copier", copied: "Copié.", regenerate: "Régénérer", stop: "Arrêter", stopped: "Arrêté.",
    goodAnswer: "Bonne réponse", badAnswer: "Mauvaise réponse", comment: "Commentaire (facultatif)", sendComment:
    "Enregistrer le commentaire", thanks: "Merci : votre avis est enregistré.", ratings: "Avis sur les réponses",
    ratedUp: "jugées bonnes", ratedDown: "jugées mauvaises", rating: "Avis", details: "Détails", good: "Bonne",
    bad: "Mauvaise", close: "Fermer",
    whoMayRead: "Qui peut lire ces fichiers", onlyMe: "Moi seul", aGroup: "Un groupe dont je fais partie (son jeton)",
    everyone: "Tout le monde", groupToken: "Jeton du groupe",
  },
};

export function lang() {
  const chosen = localStorage.getItem("dfr.lang");
  if (chosen === "en" || chosen === "fr") return chosen;
  return (navigator.language || "en").startsWith("fr") ? "fr" : "en";
}

export function setLang(value) {
  localStorage.setItem("dfr.lang", value);
  document.documentElement.lang = value;
}

export function t(key) {
  return (WORDS[lang()] || WORDS.en)[key] || WORDS.en[key] || key;
}

/** The static words of the page (elements with data-i18n). */
export function translateStatic() {
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
}
