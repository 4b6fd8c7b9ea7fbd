/**
 * The trained local model as plain typed arrays: what training produces, what the cache file
 * stores, and what the runtime model reads. Token values inside the model are "vocabulary
 * indexes": positions in `vocabulary`, the sorted list of cl100k ids seen in training (plus
 * end-of-text), so every dense array is as small as the vocabulary the model can emit.
 */

/** The contexts of one length, as a reversed trie level: a node is a context of `length` tokens. */
export interface LocalModelLevel {
  /** Context length of this level's nodes (1 = the previous token only). */
  length: number;
  /** Node count. Level 1 is dense: node index = vocabulary index of the previous token. */
  nodeCount: number;
  /** For levels above 1, the token this node adds in front of its parent's context (vocabulary index). */
  nodeTokens: Uint16Array;
  /** Node i continues with entries continuationOffsets[i] … continuationOffsets[i + 1] − 1. */
  continuationOffsets: Uint32Array;
  /** Continuation tokens (vocabulary indexes), ascending within a node so one token can be found by binary search. */
  continuationTokens: Uint16Array;
  /** Discounted probability of each continuation at this level: max(count − D, 0) / node total. */
  continuationProbabilities: Float32Array;
  /** Node i's children (next level, one token further back) are next-level nodes childOffsets[i] … childOffsets[i + 1] − 1; empty on the top level. */
  childOffsets: Uint32Array;
}

export interface LocalModelData {
  /** n of the n-gram: the longest context is order − 1 tokens. */
  order: number;
  /** Vocabulary index → cl100k token id, ascending; the last entry is end-of-text. */
  vocabulary: Int32Array;
  /** The lowest order: Kneser-Ney continuation probabilities interpolated with a uniform floor; sums to 1. */
  unigram: Float64Array;
  /** Levels for context lengths 1 … order − 1. */
  levels: LocalModelLevel[];
}
