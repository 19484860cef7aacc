"""HTTP entry points: thin Flask blueprints that validate, call one function, format Datafari's JSON."""
