// Per-op cases of the string and hash-table ops (tests/ops/gen.js; cases.js
// appends them), exactly (tol 0). Strings come from Consts (string weights
// in the shard); every case ends in numbers: string outputs are hashed by a
// StringToHashBucketFast after the op. StringToHashBucketFast over every
// length class of fingerprint64, bucket counts past 2^31 and 2^32, UTF-8 and
// invalid bytes; StringSplit with one, several and no delimiters, skip_empty
// on, off and absent; StringNGrams with dynamic and fixed padding,
// preserve_short_sequences, empty sequences, no widths, empty data;
// StaticRegexReplace with classes, groups, alternation, lazy and greedy
// quantifiers, empty matches, the rewrite's $ forms, tfjs's lowercasing of
// the pattern and rewrite (their bytes read as Latin-1, as atob does), and
// strings with surrogate pairs, a BOM and bad UTF-8; the ops that move
// elements, which tfjs takes strings for (Reshape, ExpandDims, Squeeze,
// GatherNd, ConcatV2, Slice, StridedSlice, Tile, Pack, Unpack, Fill); hash tables string->int32, int32->float32 (keys fed as a model
// input), float keys with NaN and -0, 2-D and string values, duplicate keys,
// both op versions, and the size.
'use strict';

function strCases(rngFor, util, { T, I, B, S }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const TS = (dt) => (dt === 'string' ? { type: 'DT_STRING' } : T(dt));
  const LIST = (v) => ({ list: { i: v.map(String) } });
  // as tensorflowjs_converter writes a string attr: its UTF-8 bytes (tfjs
  // reads them back with atob, a Latin-1 character a byte, and lowercases)
  const SU = (v) => ({ s: Buffer.from(v, 'utf8').toString('base64') });
  const hash = (name, input, nb = 1000003) => ({ name, op: 'StringToHashBucketFast', input: [input], attr: { num_buckets: I(nb) } });
  const words = ['the', 'Cat', 'sat', 'on', 'a', 'mat', 'déjà', 'vu', '中文', '😀', 'x', 'Hello', 'world', ''];
  const randStr = (u, n) => {
    const alpha = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;-_';
    let s = '';
    for (let i = 0; i < n; i++) s += alpha[u.int(0, alpha.length - 1)];
    return s;
  };
  const BAD = [0x61, 0xff, 0x62, 0xc3, 0x28, 0xe2, 0x82, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98]; // invalid UTF-8
  const BOM = [0xef, 0xbb, 0xbf, 0x62, 0x6f, 0x6d];                                        // BOM + "bom"

  // ---- StringToHashBucketFast: fingerprint64's length classes
  {
    const u = util(rngFor());
    const lens = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129, 200, 333];
    const vals = lens.map((n) => randStr(u, n));
    out.push({ name: 'StringToHashBucketFast_lengths', op: 'StringToHashBucketFast', tol: 0,
      attr: { num_buckets: I(1000003) }, inputs: [cst('string', [vals.length], vals, 'x')] });
    for (const nb of [1, 7, 2147483647, 2147483648, 4294967311]) {
      out.push({ name: `StringToHashBucketFast_nb${nb}`, op: 'StringToHashBucketFast', tol: 0,
        attr: { num_buckets: I(nb) }, inputs: [cst('string', [vals.length], vals, 'x')] });
    }
    const uni = ['déjà vu', '中文字符', '😀😃', BAD, BOM, 'ß', '', 'é'];
    out.push({ name: 'StringToHashBucketFast_utf8', op: 'StringToHashBucketFast', tol: 0,
      attr: { num_buckets: I(65536) }, inputs: [cst('string', [2, 4], uni, 'x')] });
    out.push({ name: 'StringToHashBucketFast_scalar', op: 'StringToHashBucketFast', tol: 0,
      attr: { num_buckets: I(97) }, inputs: [cst('string', [], ['a scalar string'], 'x')] });
  }

  // ---- StringSplit: indices, shape; the values hashed
  const splits = [
    { d: ' ', skip: false, xs: ['the cat  sat', ' lead', 'trail ', '', 'none', '  ', 'a b c d e f g'] },
    { d: ' ', skip: true, xs: ['the cat  sat', ' lead', 'trail ', '', 'none', '  ', 'a b c d e f g'] },
    { d: ',;', skip: false, xs: ['a,b;c', ',,', 'x;;y,z', 'plain', ';'] },
    { d: '', skip: false, xs: ['abc', '', 'déjà', 'x y'] },
    { d: 'ab', skip: null, xs: ['cabbage', 'abab', 'bad', 'c'] },
    { d: ' ', skip: false, xs: ['', '', ''] },
    { d: 'é', skip: true, xs: ['caféxé', 'é', 'plain', 'déjà vu'] },
  ];
  splits.forEach((c, k) => {
    const attr = {};
    if (c.skip !== null) attr.skip_empty = B(c.skip);
    out.push({ name: `StringSplit_${k}`, op: 'StringSplit', tol: 0, outputs: 3, attr,
      inputs: [cst('string', [c.xs.length], c.xs, 'input'), cst('string', [], [c.d], 'delimiter')],
      after: [hash('values_hash', 'out1')] });
  });

  // ---- StringNGrams: ngrams hashed, splits
  {
    const u = util(rngFor());
    const toks = Array.from({ length: 11 }, () => words[u.int(0, words.length - 1)]);
    const ngrams = [
      { w: [1, 2, 3], sep: ' ', l: '<s>', r: '</s>', pw: -1, ps: false, sp: [0, 3, 3, 7, 8, 11] },
      { w: [2], sep: ' ', l: '<s>', r: '</s>', pw: 0, ps: true, sp: [0, 1, 1, 4, 11] },
      { w: [3, 5], sep: '_X_', l: 'L', r: 'R', pw: 1, ps: true, sp: [0, 2, 3, 11] },
      { w: [4], sep: '|', l: 'Left', r: 'RIGHT', pw: 2, ps: false, sp: [0, 1, 2, 11] },
      { w: [], sep: ' ', l: '', r: '', pw: 0, ps: true, sp: [0, 5, 5, 11] },
      { w: [1], sep: '', l: 'p', r: 'q', pw: 3, ps: false, sp: [0, 11] },
      { w: [6], sep: '+', l: '[', r: ']', pw: -1, ps: true, sp: [0, 2, 11] },
    ];
    ngrams.forEach((c, k) => {
      out.push({ name: `StringNGrams_${k}`, op: 'StringNGrams', tol: 0, outputs: 2,
        attr: { separator: S(c.sep), ngram_widths: LIST(c.w), left_pad: S(c.l), right_pad: S(c.r),
          pad_width: I(c.pw), preserve_short_sequences: B(c.ps), Tsplits: T('int32') },
        inputs: [cst('string', [toks.length], toks, 'data'), cst('int32', [c.sp.length], c.sp, 'data_splits')],
        after: [hash('ngrams_hash', 'out0')] });
    });
    out.push({ name: 'StringNGrams_latin1', op: 'StringNGrams', tol: 0, outputs: 2,
      attr: { separator: SU('É→'), ngram_widths: LIST([1, 2]), left_pad: SU('Ä'), right_pad: SU('ß×Þ'),
        pad_width: I(1), preserve_short_sequences: B(false), Tsplits: T('int32') },
      inputs: [cst('string', [toks.length], toks, 'data'), cst('int32', [3], [0, 4, 11], 'data_splits')],
      after: [hash('ngrams_hash', 'out0')] });
    out.push({ name: 'StringNGrams_empty', op: 'StringNGrams', tol: 0, outputs: 2,
      attr: { separator: S(' '), ngram_widths: LIST([2]), left_pad: S('<'), right_pad: S('>'),
        pad_width: I(-1), preserve_short_sequences: B(false), Tsplits: T('int32') },
      inputs: [cst('string', [0], [], 'data'), cst('int32', [1], [0], 'data_splits')],
      after: [hash('ngrams_hash', 'out0')] });
  }

  // ---- StaticRegexReplace: the result hashed
  {
    const xs = ['hello world', 'The cat sat on the mat', 'aaa bbb aab abab', 'john@example.com, mary@test.com',
      '  padded  ', '', 'déjà vu 😀!', 'x1y22z333', 'abcd acd abbbd', 'oooh fooo booooo', 'tab\there\u00a0nbsp\u3000id',
      'costs $5.00 \\ each', 'The THE the', 'J is for jam', 'abab xab', 'a-b]c\\d [x]{y}|z/^q$', 'cc acc aacc',
      'line\nbreak\rcr\u2028ls\fff\vvt'];
    const bytes = [...xs, BAD, BOM];
    const res = [
      { p: '[aeiou]', r: '*', g: true }, { p: '[aeiou]', r: '*', g: false }, { p: 'a+', r: '<$&>', g: true },
      { p: '(\\w+)@(\\w+)\\.com', r: '$2 at $1 ($0 $3 $$ $10 $01 $<n>)', g: true },
      { p: '^\\s+|\\s+$', r: '', g: true }, { p: '', r: '-', g: true }, { p: '', r: '-', g: false },
      { p: 'x*', r: '!', g: true }, { p: '(a|ab)(c|bcd)(d*)', r: '[$1|$2|$3]', g: true },
      { p: '(a*)*b', r: '{$1}', g: true }, { p: '(z)|(a)', r: '[$1,$2]', g: true }, { p: 'a.*?b', r: '#', g: true },
      { p: 'a.*b', r: '#', g: false }, { p: '\\bThe\\b', r: 'THE', g: true }, { p: '\\D', r: '#', g: true },
      { p: '[^a-z ]', r: '?', g: true }, { p: '.', r: '.', g: true }, { p: '\\s', r: '_', g: true },
      { p: 'o{2,3}', r: '0', g: true }, { p: '(?:ab){2}', r: 'X', g: true }, { p: '\\$|\\.|\\\\', r: "[$`|$']", g: true },
      { p: '[A-Z]+', r: 'U', g: null }, { p: '\\x4A|o+?', r: '%', g: true }, { p: 'b{2,}|c?d', r: '=', g: true },
      { p: '(o)(o)?$', r: '<$2$1>', g: false }, { p: '\\B.\\B', r: '~', g: true },
      { p: '((a)|b)+', r: '<$1|$2>', g: true }, { p: '(|a)+c', r: '[$1]', g: true }, { p: '(a?)+?c', r: '[$1]', g: true },
      { p: '[\\s\\S]', r: '', g: false }, { p: '[\\W\\d]+', r: '#', g: true }, { p: '\\w+$', r: '<$&>', g: false },
      { p: '(?:)', r: '.', g: true }, { p: 'a{0}b', r: 'B', g: true }, { p: 'c|', r: '+', g: true },
      { p: '\\.|\\*|\\+|\\?|\\(|\\)|\\[|\\]|\\{|\\}|\\||\\/|\\^|\\$|\\-', r: '@', g: true },
      { p: '[\\]\\-\\\\]', r: '!', g: true }, { p: '[\\t\\n\\r\\f\\v]', r: '^', g: true },
      { p: '.+', r: '($&)', g: true }, { p: '[a-c]{2,}?', r: '$`', g: true },
    ];
    res.forEach((c, k) => {
      const attr = { pattern: S(c.p), rewrite: S(c.r) };
      if (c.g !== null) attr.replace_global = B(c.g);
      out.push({ name: `StaticRegexReplace_${k}`, op: 'StaticRegexReplace', tol: 0, attr,
        inputs: [cst('string', [bytes.length], bytes, 'input')], after: [hash('replaced_hash', 'out0')] });
    });
    // long strings: unit repeats do not recurse per unit
    {
      const u = util(rngFor());
      const long = [randStr(u, 6000), 'a'.repeat(5000) + 'b', 'x'.repeat(7000)];
      const lres = [{ p: '\\w+', r: '<w>' }, { p: '.*', r: '[$&]' }, { p: 'a*b', r: '!' }, { p: '[^ ]+? ', r: '_' }];
      lres.forEach((c, k) => {
        out.push({ name: `StaticRegexReplace_long_${k}`, op: 'StaticRegexReplace', tol: 0,
          attr: { pattern: S(c.p), rewrite: S(c.r), replace_global: B(true) },
          inputs: [cst('string', [long.length], long, 'input')], after: [hash('replaced_hash', 'out0')] });
      });
    }
    // non-ASCII patterns and rewrites: their bytes are Latin-1 code units there
    [{ p: 'é|ã', r: 'Ü' }, { p: '[À-ÿ]+', r: '<$&>' }, { p: '\\xe9|\\xc3', r: '·' }].forEach((c, k) => {
      out.push({ name: `StaticRegexReplace_latin1_${k}`, op: 'StaticRegexReplace', tol: 0,
        attr: { pattern: SU(c.p), rewrite: SU(c.r), replace_global: B(true) },
        inputs: [cst('string', [6], ['déjà vu', 'ãé', 'Ã©', 'plain', 'ÀÉÎ', '😀é'], 'input')],
        after: [hash('replaced_hash', 'out0')] });
    });
    out.push({ name: 'StaticRegexReplace_norewrite', op: 'StaticRegexReplace', tol: 0,
      attr: { pattern: S('cat'), replace_global: B(true) },
      inputs: [cst('string', [2, 2], ['a cat', 'cats', 'dog', 'catcat'], 'input')], after: [hash('replaced_hash', 'out0')] });
  }

  // ---- ops that only move elements, on strings: hashed after
  {
    const u = util(rngFor());
    const sv = Array.from({ length: 24 }, (_, i) => `${words[u.int(0, words.length - 1)]}${i}`);
    const sv2 = Array.from({ length: 12 }, (_, i) => `second ${i}`);
    const data = cst('string', [4, 6], sv, 'x');
    const TSS = TS('string');
    const moves = [
      { op: 'Reshape', attr: { T: TSS, Tshape: T('int32') }, inputs: [data, cst('int32', [3], [2, 3, 4], 'shape')] },
      { op: 'ExpandDims', attr: { T: TSS, Tdim: T('int32') }, inputs: [data, cst('int32', [], [1], 'dim')] },
      { op: 'Squeeze', attr: { T: TSS, squeeze_dims: { list: { i: ['0'] } } }, inputs: [cst('string', [1, 6], sv.slice(0, 6), 'x')] },
      { op: 'GatherNd', attr: { Tparams: TSS, Tindices: T('int32') },
        inputs: [data, cst('int32', [3, 2], [0, 5, 3, 0, 2, 2], 'indices')] },
      { op: 'ConcatV2', attr: { T: TSS, N: I(2), Tidx: T('int32') },
        inputs: [data, cst('string', [2, 6], sv2, 'y'), cst('int32', [], [0], 'axis')] },
      { op: 'Slice', attr: { T: TSS, Index: T('int32') }, inputs: [data, cst('int32', [2], [1, 2], 'begin'), cst('int32', [2], [2, -1], 'size')] },
      { op: 'StridedSlice', attr: { T: TSS, Index: T('int32'), begin_mask: I(0), end_mask: I(0), ellipsis_mask: I(0), new_axis_mask: I(0), shrink_axis_mask: I(0) },
        inputs: [data, cst('int32', [2], [3, 5], 'begin'), cst('int32', [2], [0, 0], 'end'), cst('int32', [2], [-1, -2], 'strides')] },
      { op: 'Tile', attr: { T: TSS, Tmultiples: T('int32') }, inputs: [data, cst('int32', [2], [2, 1], 'multiples')] },
      { op: 'Pack', attr: { T: TSS, N: I(2), axis: I(1) }, inputs: [cst('string', [2, 6], sv2, 'a'), cst('string', [2, 6], sv.slice(0, 12), 'b')] },
      { op: 'Fill', attr: { T: TSS, index_type: T('int32') }, inputs: [cst('int32', [2], [2, 3], 'dims'), cst('string', [], ['filled'], 'value')] },
      { op: 'Unpack', attr: { T: TSS, num: I(4), axis: I(0) }, inputs: [data], outputs: 4 },
    ];
    moves.forEach((c) => {
      const n = c.outputs || 1;
      out.push({ name: `${c.op}_string`, op: c.op, tol: 0, attr: c.attr, inputs: c.inputs, outputs: n,
        after: Array.from({ length: n }, (_, k) => hash(`moved_hash${k}`, `out${k}`)) });
    });
  }

  // ---- hash tables
  const V2 = { table: 'HashTableV2', imp: 'LookupTableImportV2', init: 'InitializeTableV2', find: 'LookupTableFindV2', size: 'LookupTableSizeV2' };
  const V1 = { table: 'HashTable', imp: 'LookupTableImport', init: 'InitializeTable', find: 'LookupTableFind', size: 'LookupTableSize' };
  const tableNode = (ops, kd, vd) => ({ name: 'table', op: ops.table, input: [],
    attr: { key_dtype: TS(kd), value_dtype: TS(vd), shared_name: S('t'), use_node_name_sharing: B(false) } });
  const fillNode = (op, kd, vd) => ({ name: 'fill', op, input: ['table', 'keys', 'values'], attr: { Tin: TS(kd), Tout: TS(vd) } });
  const findNode = (ops, kd, vd, handle, extra = []) => ({ name: 'find', op: ops.find, input: [handle, 'query', 'default', ...extra],
    attr: { Tin: TS(kd), Tout: TS(vd) } });
  const sizeNode = (ops, handle, extra = []) => ({ name: 'size', op: ops.size, input: [handle, ...extra], attr: {} });
  const skeys = ['apple', 'banana', 'cherry', 'apple', 'déjà', BOM, [0xff], 'Zed', ''];
  const svals = [1, 2, 3, 4, 5, 6, 7, 8, 9];
  const squery = ['apple', 'banana', 'durian', '', 'déjà', 'bom', [0xfe], 'zed', 'Zed', 'cherry', 'apple '];
  // string -> int32, the find as the op, the size after it
  for (const [ops, tag] of [[V2, 'v2'], [V1, 'v1']]) {
    out.push({ name: `${ops.find}_str_int`, op: ops.find, tol: 0,
      inputs: [cst('string', [skeys.length], skeys, 'keys'), cst('int32', [svals.length], svals, 'values'),
        cst('string', [squery.length], squery, 'query'), cst('int32', [], [-1], 'default')],
      nodes: [tableNode(ops, 'string', 'int32'), fillNode(ops.imp, 'string', 'int32')],
      opInputs: ['fill', 'query', 'default'], attr: { Tin: TS('string'), Tout: TS('int32') },
      after: [sizeNode(ops, 'fill')] });
    // int32 -> float32 with the keys a model input (the GPU part hands them over)
    const u = util(rngFor());
    const ik = Array.from({ length: 24 }, (_, i) => i * 3 - 20);
    const iv = ik.map(() => u.uni(-10, 10));
    const q = Array.from({ length: 40 }, () => u.int(-25, 55));
    out.push({ name: `${ops.find}_int_float_${tag}`, op: ops.find, tol: 0,
      inputs: [cst('int32', [ik.length], ik, 'keys'), cst('float32', [iv.length], iv, 'values'),
        ph('int32', [5, 8], q, 'query'), cst('float32', [], [0.5], 'default')],
      nodes: [tableNode(ops, 'int32', 'float32'), fillNode(ops.init, 'int32', 'float32')],
      opInputs: ['fill', 'query', 'default'], attr: { Tin: TS('int32'), Tout: TS('float32') } });
    // the table made, filled, sized as the op
    out.push({ name: `${ops.size}_${tag}`, op: ops.size, tol: 0,
      inputs: [cst('string', [skeys.length], skeys, 'keys'), cst('int32', [svals.length], svals, 'values')],
      nodes: [tableNode(ops, 'string', 'int32'), fillNode(ops.imp, 'string', 'int32')], opInputs: ['fill'], attr: {} });
    // the table as the op; its handle's Identity (out0) only orders the rest
    out.push({ name: `${ops.table}_${tag}`, op: ops.table, tol: 0,
      attr: { key_dtype: TS('string'), value_dtype: TS('int32'), shared_name: S('t'), use_node_name_sharing: B(false) },
      inputs: [cst('string', [skeys.length], skeys, 'keys'), cst('int32', [svals.length], svals, 'values'),
        cst('string', [squery.length], squery, 'query'), cst('int32', [], [0], 'default')],
      opInputs: [],
      after: [{ name: 'fill', op: ops.imp, input: ['op', 'keys', 'values'], attr: {} },
        { name: 'find', op: ops.find, input: ['fill', 'query', 'default', '^out0'], attr: {} }, sizeNode(ops, 'fill')] });
    for (const fill of [ops.imp, ops.init]) {
      out.push({ name: `${fill}_${tag}`, op: fill, tol: 0,
        inputs: [cst('string', [skeys.length], skeys, 'keys'), cst('int32', [svals.length], svals, 'values'),
          cst('string', [squery.length], squery, 'query'), cst('int32', [], [100], 'default')],
        nodes: [tableNode(ops, 'string', 'int32')], opInputs: ['table', 'keys', 'values'], attr: {},
        after: [findNode(ops, 'string', 'int32', 'op', ['^out0']), sizeNode(ops, 'op')] });
    }
  }
  // the keys computed on the GPU from a model input: the table is made and
  // filled by the interpreter before that stage and again after it
  {
    const u = util(rngFor());
    const q = Array.from({ length: 30 }, () => u.int(-30, 30));
    out.push({ name: 'LookupTableFindV2_staged', op: 'LookupTableFindV2', tol: 0,
      inputs: [cst('int32', [6], [1, 2, 3, 5, 8, 13], 'keys'), cst('float32', [6], [0.5, 1.5, 2.5, 3.5, 4.5, 5.5], 'values'),
        ph('int32', [30], q, 'query'), cst('int32', [], [3], 'shift'), cst('float32', [], [-1], 'default')],
      nodes: [tableNode(V2, 'int32', 'float32'), fillNode('LookupTableImportV2', 'int32', 'float32'),
        { name: 'shifted', op: 'AddV2', input: ['query', 'shift'], attr: { T: T('int32') } }],
      opInputs: ['fill', 'shifted', 'default'], attr: {},
      after: [{ name: 'twice', op: 'Mul', input: ['out0', 'out0'], attr: { T: T('float32') } }] });
  }
  // float keys: NaN is one key, -0 is 0; a later duplicate wins
  out.push({ name: 'LookupTableFindV2_float_keys', op: 'LookupTableFindV2', tol: 0,
    inputs: [cst('float32', [6], [NaN, -0, 1.5, 2.25, 1.5, -3], 'keys'), cst('int32', [6], [10, 20, 30, 40, 50, 60], 'values'),
      cst('float32', [7], [0, NaN, 1.5, -3, 2.2, -0, 7], 'query'), cst('int32', [], [-9], 'default')],
    nodes: [tableNode(V2, 'float32', 'int32'), fillNode('LookupTableImportV2', 'float32', 'int32')],
    opInputs: ['fill', 'query', 'default'], attr: {} });
  // rows of values: [keys] x [3], the query 2-D (tfjs flattens it)
  out.push({ name: 'LookupTableFindV2_rows', op: 'LookupTableFindV2', tol: 0,
    inputs: [cst('int32', [4], [7, 3, 9, 1], 'keys'), cst('float32', [4, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'values'),
      cst('int32', [2, 3], [9, 2, 7, 1, 1, 5], 'query'), cst('float32', [3], [-1, -2, -3], 'default')],
    nodes: [tableNode(V2, 'int32', 'float32'), fillNode('LookupTableImportV2', 'int32', 'float32')],
    opInputs: ['fill', 'query', 'default'], attr: {} });
  // string values, hashed after the find
  out.push({ name: 'LookupTableFindV2_str_values', op: 'LookupTableFindV2', tol: 0,
    inputs: [cst('int32', [5], [5, 4, 3, 2, 1], 'keys'), cst('string', [5], ['five', 'four', 'three', 'two', 'one'], 'values'),
      cst('int32', [8], [1, 2, 3, 0, 4, 5, 6, 1], 'query'), cst('string', [], ['none'], 'default')],
    nodes: [tableNode(V2, 'int32', 'string'), fillNode('LookupTableImportV2', 'int32', 'string')],
    opInputs: ['fill', 'query', 'default'], attr: {}, after: [hash('found_hash', 'out0')] });
  return out;
}

module.exports = { strCases };
