/**
 * The trained local model as plain typed arrays: what training produces, the cache file stores and
 * the runtime model reads. Tokens inside the model are vocabulary indexes: positions in
 * `vocabulary`, the sorted cl100k ids seen in training, so every dense array is only that large.
 */

/** The contexts of one length, as a reversed trie level: a node is a context of `length` tokens. */
export interface LocalModelLevel {
  /** Context length of this level's nodes (1 = the previous token only). */
  length: number;
  /** Level 1 is dense: node index = vocabulary index of the previous token. */
  nodeCount: number;
  /** Above level 1, the token a node adds in front of its parent's context. */
  nodeTokens: Uint16Array;
  /** Node i continues with entries continuationOffsets[i] … continuationOffsets[i + 1] − 1. */
  continuationOffsets: Uint32Array;
  /** Continuation tokens, ascending within a node (for binary search). */
  continuationTokens: Uint16Array;
  /** Discounted probability of each continuation: max(count − D, 0) / node total. */
  continuationProbabilities: Float32Array;
  /** Node i's children (one token further back) are next-level nodes childOffsets[i] … childOffsets[i + 1] − 1; empty on the top level. */
  childOffsets: Uint32Array;
}

export interface LocalModelData {
  /** n of the n-gram: the longest context is order − 1 tokens. */
  order: number;
  /** Vocabulary index → cl100k token id, ascending; the last entry is end-of-text. */
  vocabulary: Int32Array;
  /** Kneser-Ney continuation probabilities interpolated with a uniform floor; sums to 1. */
  unigram: Float64Array;
  /** Levels for context lengths 1 … order − 1. */
  levels: LocalModelLevel[];
}
