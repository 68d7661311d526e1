"""The entity index, split as DPR and Pyserini split theirs:

- `folder`: an index folder's layout, manifest and identity (what it was built from; names the cache folder);
- `build`: the offline build (KB tokenized by a process pool, entity-tower encoding that resumes);
- `search`: search backends (faiss index types by name, torch exact search), chosen by hardware from a table;
- `entity_inputs`: the reader's entity inputs, stored ids gathered by row;
- `entity_index`: `EntityIndex`, a folder opened for linking.

`python -m annotator.entity_index` is the command line that builds one.
"""
from annotator.entity_index.build import EntityEncoder
from annotator.entity_index.entity_index import EntityIndex
from annotator.entity_index.folder import (COMPACT_VECTORS, MANIFEST, cached_index_dir, entity_tower_id, identity_key,
                                           index_identity, weights_identity, write_compact_vectors)
from annotator.entity_index.search import INDEX_FACTORIES, new_faiss_index

__all__ = ["COMPACT_VECTORS", "INDEX_FACTORIES", "MANIFEST", "EntityEncoder", "EntityIndex", "cached_index_dir",
           "entity_tower_id", "identity_key", "index_identity", "new_faiss_index", "weights_identity",
           "write_compact_vectors"]
