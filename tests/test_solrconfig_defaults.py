"""FileShare's chunk-and-embed processor reads its settings as Datafari's ``vector.*`` user
properties, with a default in ``solrconfig.xml`` for each (``${vector.chunksize:300}``); the sidecar
validates and seeds the same properties from its configuration (``solr/user_properties.py``). The
two defaults are one: what a configset that nobody has set says is what the configuration says."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from datafari_rag.config import Settings
from datafari_rag.paths import CONFIGSETS
from datafari_rag.solr.user_properties import CHUNKING, WIRING, text

PROPERTY = re.compile(r"^\$\{([^:}]+):([^}]*)\}$")
PROCESSOR = "datafari.rag.solr.vector.VectorUpdateProcessorFactory"
# the one deliberate difference: a configset uploaded by hand leaves chunk-and-embed off until
# bootstrap turns it on, with its collection, model and field in place
OFF_UNTIL_BOOTSTRAP = {"vector.enabled": "false"}


def processor_properties() -> dict[str, str]:
    """Each user property the processor's configuration reads, with the default it gives it."""
    root = ET.parse(CONFIGSETS / "FileShare" / "conf" / "solrconfig.xml").getroot()
    [processor] = [p for p in root.iter("processor") if p.attrib.get("class") == PROCESSOR]
    found = {}
    for option in processor:
        matched = PROPERTY.match((option.text or "").strip())
        if matched:
            found[matched.group(1)] = matched.group(2)
    return found


def test_every_property_the_processor_reads_is_one_the_sidecar_sets() -> None:
    assert set(processor_properties()) == set(CHUNKING) | set(WIRING)


def test_solrconfig_defaults_are_the_configuration_defaults() -> None:
    settings = Settings()
    expected = {key: text(getattr(settings, attr)) for key, attr in {**CHUNKING, **WIRING}.items()}
    assert processor_properties() == {**expected, **OFF_UNTIL_BOOTSTRAP}
