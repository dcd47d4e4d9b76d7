/* StaticRegexReplace as TensorFlow.js runs it: JavaScript's
 * String.prototype.replace with a RegExp (no flags but 'g'), on the string
 * decoded from UTF-8 to UTF-16 code units, the result encoded back.
 *
 * The matcher is a backtracking one written after ECMAScript's pattern
 * semantics (continuation matchers, RepeatMatcher's capture reset and its
 * empty-iteration check), for the syntax JavaScript and RE2 (TensorFlow's
 * engine) both accept: literals and escaped metacharacters, . \d \w \s and
 * their negations, \t \n \r \f \v \xHH, classes with ranges, ^ $ \b \B,
 * groups and (?:...), |, and * + ? {n} {n,} {n,m} greedy or lazy. Anything
 * else (backreferences, lookaround, named groups, \u, \p, \c) is refused
 * with the pattern's position, when the model is opened. The pattern's code
 * units are its bytes: tfjs-converter decodes string attrs with atob, as
 * Latin-1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

#define RX_MAX_NODES 4096
#define RX_MAX_REPEAT 1000   /* RE2's limit on {n,m} */
#define RX_MAX_DEPTH 20000   /* C stack frames of one match attempt (a few MB at most) */
#define RX_MAX_STEPS 400000000LL

typedef enum {
    RN_CHAR, RN_ANY, RN_CLASS, RN_BOL, RN_EOL, RN_WORDB, RN_NWORDB,
    RN_GROUP, RN_ALT, RN_SEQ, RN_REPEAT
} rn_kind;

typedef struct {
    uint8_t low[256];    /* members below 256 (a pattern's code units are Latin-1) */
    /* members from 256 up: all (\W or \D inside), those that are not
     * JavaScript white space (\S), those that are (\s) */
    uint8_t all_high, high_nonspace, high_space;
    uint8_t negate;
} rx_class;

typedef struct {
    rn_kind kind;
    uint16_t ch;
    int cls;             /* RN_CLASS */
    int cap;             /* RN_GROUP: capture number (1-based), 0: non-capturing */
    int min, max, greedy; /* RN_REPEAT; max -1: no bound */
    int cap_lo, cap_n;   /* RN_REPEAT: the captures inside it */
    int first, n_kids;   /* children: kids[first .. first+n_kids) */
} rx_node;

struct rx_prog {
    rx_node *nodes;
    int n_nodes;
    int *kids;
    int n_kids;
    rx_class *cls;
    int n_cls;
    int n_caps;
    int root;
};

/* ---- parsing ---- */

typedef struct {
    const char *p;
    size_t len, i;
    rx_prog *r;
    int cap_next;
    char *why;
    size_t why_n;
    int depth;
} rx_parser;

static int px_fail(rx_parser *ps, const char *what)
{
    snprintf(ps->why, ps->why_n, "%s at position %zu of the pattern", what, ps->i);
    return -1;
}

static int px_node(rx_parser *ps, rn_kind k)
{
    rx_prog *r = ps->r;
    if (r->n_nodes >= RX_MAX_NODES)
        return px_fail(ps, "pattern too long");
    rx_node *nn = realloc(r->nodes, (size_t)(r->n_nodes + 1) * sizeof *nn);
    if (!nn)
        return px_fail(ps, "out of memory");
    r->nodes = nn;
    r->nodes[r->n_nodes] = (rx_node){.kind = k, .greedy = 1};
    return r->n_nodes++;
}

static int px_class(rx_parser *ps)
{
    rx_prog *r = ps->r;
    rx_class *nc = realloc(r->cls, (size_t)(r->n_cls + 1) * sizeof *nc);
    if (!nc)
        return px_fail(ps, "out of memory");
    r->cls = nc;
    memset(&r->cls[r->n_cls], 0, sizeof *nc);
    return r->n_cls++;
}

/* Children list kept contiguous: a node's kids are appended in one go. */
static int px_set_kids(rx_parser *ps, int node, const int *kids, int n)
{
    rx_prog *r = ps->r;
    int *nk = realloc(r->kids, (size_t)(r->n_kids + n + 1) * sizeof *nk);
    if (!nk)
        return px_fail(ps, "out of memory");
    r->kids = nk;
    memcpy(r->kids + r->n_kids, kids, (size_t)n * sizeof *kids);
    r->nodes[node].first = r->n_kids;
    r->nodes[node].n_kids = n;
    r->n_kids += n;
    return 0;
}

static void cls_add_range(rx_class *c, int lo, int hi)
{
    for (int x = lo; x <= hi && x < 256; x++)
        c->low[x] = 1;
}

static int is_word_ascii(int x)
{
    return (x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || (x >= '0' && x <= '9') || x == '_';
}

/* JavaScript's WhiteSpace and LineTerminator code points. */
static int is_js_space(unsigned x)
{
    return x == 9 || x == 10 || x == 11 || x == 12 || x == 13 || x == 32 || x == 0xa0 ||
           x == 0x1680 || (x >= 0x2000 && x <= 0x200a) || x == 0x2028 || x == 0x2029 ||
           x == 0x202f || x == 0x205f || x == 0x3000 || x == 0xfeff;
}

/* \d \w \s (lower) or \D \W \S (upper) into c. */
static void cls_add_escape(rx_class *c, char e)
{
    int neg = e == 'D' || e == 'W' || e == 'S';
    char k = (char)(e | 0x20);
    for (int x = 0; x < 256; x++) {
        int in = k == 'd' ? (x >= '0' && x <= '9') : k == 'w' ? is_word_ascii(x) : is_js_space((unsigned)x);
        if (in != neg)
            c->low[x] = 1;
    }
    if (e == 'D' || e == 'W')
        c->all_high = 1;
    else if (e == 'S')
        c->high_nonspace = 1;
    else if (e == 's')
        c->high_space = 1;
}

static int hexval(char h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    return -1;
}

/* A single-character escape after '\' (position at the letter): its code
 * unit, -2 for a class escape (d w s D W S), -1 refused. */
static int px_escape_char(rx_parser *ps)
{
    char e = ps->p[ps->i];
    static const char meta[] = "^$\\.*+?()[]{}|/-";
    if (strchr("dwsDWS", e)) {
        ps->i++;
        return -2;
    }
    switch (e) {
    case 't': ps->i++; return '\t';
    case 'n': ps->i++; return '\n';
    case 'r': ps->i++; return '\r';
    case 'f': ps->i++; return '\f';
    case 'v': ps->i++; return '\v';
    case 'x': {
        int a = ps->i + 2 < ps->len ? hexval(ps->p[ps->i + 1]) : -1;
        int b = a >= 0 ? hexval(ps->p[ps->i + 2]) : -1;
        if (b < 0)
            return px_fail(ps, "\\x needs two hex digits");
        ps->i += 3;
        return a * 16 + b;
    }
    default: break;
    }
    if (e && strchr(meta, e)) {
        ps->i++;
        return (unsigned char)e;
    }
    if (e >= '0' && e <= '9')
        return px_fail(ps, "backreferences and octal escapes are not supported");
    return px_fail(ps, "this escape is not supported (only \\d \\w \\s \\D \\W \\S \\b \\B \\t \\n \\r \\f \\v \\xHH and escaped metacharacters)");
}

static int px_class_node(rx_parser *ps)
{
    ps->i++; /* [ */
    int node = px_node(ps, RN_CLASS), ci = px_class(ps);
    if (node < 0 || ci < 0)
        return -1;
    ps->r->nodes[node].cls = ci;
    rx_class *c = &ps->r->cls[ci];
    if (ps->i < ps->len && ps->p[ps->i] == '^') {
        c->negate = 1;
        ps->i++;
    }
    for (;;) {
        if (ps->i >= ps->len)
            return px_fail(ps, "unterminated character class");
        char ch = ps->p[ps->i];
        if (ch == ']')
            break;
        if (ch == '[')
            return px_fail(ps, "'[' inside a class is not supported (escape it)");
        int lo;
        if (ch == '\\') {
            ps->i++;
            if (ps->i < ps->len && (ps->p[ps->i] == 'b' || ps->p[ps->i] == 'B'))
                return px_fail(ps, "\\b inside a class is not supported");
            lo = px_escape_char(ps);
            c = &ps->r->cls[ci];
            if (lo == -2) {
                cls_add_escape(c, ps->p[ps->i - 1]);
                if (ps->i + 1 < ps->len && ps->p[ps->i] == '-' && ps->p[ps->i + 1] != ']')
                    return px_fail(ps, "a class escape cannot start a range");
                continue;
            }
            if (lo < 0)
                return -1;
        } else {
            lo = (unsigned char)ch;
            ps->i++;
        }
        if (ps->i + 1 < ps->len && ps->p[ps->i] == '-' && ps->p[ps->i + 1] != ']') {
            ps->i++;
            int hi;
            if (ps->p[ps->i] == '\\') {
                ps->i++;
                hi = px_escape_char(ps);
                if (hi == -2)
                    return px_fail(ps, "a class escape cannot end a range");
                if (hi < 0)
                    return -1;
            } else {
                hi = (unsigned char)ps->p[ps->i++];
            }
            if (hi < lo)
                return px_fail(ps, "range out of order in character class");
            cls_add_range(&ps->r->cls[ci], lo, hi);
        } else {
            cls_add_range(&ps->r->cls[ci], lo, lo);
        }
    }
    ps->i++; /* ] */
    return node;
}

static int px_alt(rx_parser *ps);

/* {n}, {n,}, {n,m} at ps->i: 1 and the bounds, 0 when not a quantifier. */
static int px_braces(rx_parser *ps, int *min, int *max)
{
    size_t j = ps->i + 1;
    long a = 0, b = -1;
    int digits = 0;
    while (j < ps->len && ps->p[j] >= '0' && ps->p[j] <= '9' && digits < 9) {
        a = a * 10 + (ps->p[j++] - '0');
        digits++;
    }
    if (!digits)
        return 0;
    if (j < ps->len && ps->p[j] == ',') {
        j++;
        int d2 = 0;
        long v = 0;
        while (j < ps->len && ps->p[j] >= '0' && ps->p[j] <= '9' && d2 < 9) {
            v = v * 10 + (ps->p[j++] - '0');
            d2++;
        }
        b = d2 ? v : -1;
    } else {
        b = a;
    }
    if (j >= ps->len || ps->p[j] != '}')
        return 0;
    ps->i = j + 1;
    *min = (int)(a > RX_MAX_REPEAT + 1 ? RX_MAX_REPEAT + 1 : a);
    *max = b < 0 ? -1 : (int)(b > RX_MAX_REPEAT + 1 ? RX_MAX_REPEAT + 1 : b);
    return 1;
}

static int px_atom(rx_parser *ps)
{
    char ch = ps->p[ps->i];
    int node;
    switch (ch) {
    case '(': {
        ps->i++;
        int cap = 0;
        if (ps->i < ps->len && ps->p[ps->i] == '?') {
            if (ps->i + 1 < ps->len && ps->p[ps->i + 1] == ':')
                ps->i += 2;
            else
                return px_fail(ps, "lookaround and named groups are not supported");
        } else {
            cap = ++ps->cap_next;
        }
        if (++ps->depth > 200)
            return px_fail(ps, "groups nested too deep");
        int inner = px_alt(ps);
        ps->depth--;
        if (inner < 0)
            return -1;
        if (ps->i >= ps->len || ps->p[ps->i] != ')')
            return px_fail(ps, "missing ')'");
        ps->i++;
        if ((node = px_node(ps, RN_GROUP)) < 0 || px_set_kids(ps, node, &inner, 1))
            return -1;
        ps->r->nodes[node].cap = cap;
        return node;
    }
    case ')': return px_fail(ps, "unmatched ')'");
    case '[': return px_class_node(ps);
    case '.': ps->i++; return px_node(ps, RN_ANY);
    case '^': ps->i++; return px_node(ps, RN_BOL);
    case '$': ps->i++; return px_node(ps, RN_EOL);
    case '*': case '+': case '?': return px_fail(ps, "nothing to repeat");
    case '{': {
        int a, b;
        if (px_braces(ps, &a, &b))
            return px_fail(ps, "nothing to repeat");
        return px_fail(ps, "a literal '{' must be escaped");
    }
    case '}': return px_fail(ps, "a literal '}' must be escaped");
    case ']': return px_fail(ps, "a literal ']' must be escaped");
    case '\\': {
        ps->i++;
        if (ps->i >= ps->len)
            return px_fail(ps, "the pattern ends with '\\'");
        char e = ps->p[ps->i];
        if (e == 'b' || e == 'B') {
            ps->i++;
            return px_node(ps, e == 'b' ? RN_WORDB : RN_NWORDB);
        }
        int u = px_escape_char(ps);
        if (u == -2) {
            if ((node = px_node(ps, RN_CLASS)) < 0)
                return -1;
            int ci = px_class(ps);
            if (ci < 0)
                return -1;
            ps->r->nodes[node].cls = ci;
            cls_add_escape(&ps->r->cls[ci], e);
            return node;
        }
        if (u < 0)
            return -1;
        if ((node = px_node(ps, RN_CHAR)) >= 0)
            ps->r->nodes[node].ch = (uint16_t)u;
        return node;
    }
    default:
        ps->i++;
        if ((node = px_node(ps, RN_CHAR)) >= 0)
            ps->r->nodes[node].ch = (uint16_t)(unsigned char)ch;
        return node;
    }
}

static int px_term(rx_parser *ps)
{
    int caps_before = ps->cap_next;
    int atom = px_atom(ps);
    if (atom < 0)
        return -1;
    rn_kind k = ps->r->nodes[atom].kind;
    if (ps->i >= ps->len)
        return atom;
    int min, max;
    char q = ps->p[ps->i];
    if (q == '*') {
        min = 0, max = -1, ps->i++;
    } else if (q == '+') {
        min = 1, max = -1, ps->i++;
    } else if (q == '?') {
        min = 0, max = 1, ps->i++;
    } else if (q == '{') {
        if (!px_braces(ps, &min, &max))
            return px_fail(ps, "a literal '{' must be escaped");
        if (min > RX_MAX_REPEAT || max > RX_MAX_REPEAT)
            return px_fail(ps, "a repetition count above 1000");
        if (max >= 0 && max < min)
            return px_fail(ps, "numbers out of order in {} quantifier");
    } else {
        return atom;
    }
    if (k == RN_BOL || k == RN_EOL || k == RN_WORDB || k == RN_NWORDB)
        return px_fail(ps, "a quantifier after an assertion is not supported");
    int node = px_node(ps, RN_REPEAT);
    if (node < 0 || px_set_kids(ps, node, &atom, 1))
        return -1;
    rx_node *n = &ps->r->nodes[node];
    n->min = min;
    n->max = max;
    n->cap_lo = caps_before + 1;
    n->cap_n = ps->cap_next - caps_before;
    if (ps->i < ps->len && ps->p[ps->i] == '?') {
        n->greedy = 0;
        ps->i++;
    }
    if (ps->i < ps->len && strchr("*+?{", ps->p[ps->i]) && ps->p[ps->i] != '{')
        return px_fail(ps, "nothing to repeat");
    return node;
}

static int px_seq(rx_parser *ps)
{
    int cap = 8, n = 0;
    int *items = malloc((size_t)cap * sizeof *items);
    if (!items)
        return px_fail(ps, "out of memory");
    while (ps->i < ps->len && ps->p[ps->i] != '|' && ps->p[ps->i] != ')') {
        int t = px_term(ps);
        if (t < 0) {
            free(items);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            int *ni = realloc(items, (size_t)cap * sizeof *ni);
            if (!ni) {
                free(items);
                return px_fail(ps, "out of memory");
            }
            items = ni;
        }
        items[n++] = t;
    }
    int node = px_node(ps, RN_SEQ);
    if (node >= 0 && px_set_kids(ps, node, items, n))
        node = -1;
    free(items);
    return node;
}

static int px_alt(rx_parser *ps)
{
    int cap = 4, n = 0;
    int *alts = malloc((size_t)cap * sizeof *alts);
    if (!alts)
        return px_fail(ps, "out of memory");
    for (;;) {
        int s = px_seq(ps);
        if (s < 0) {
            free(alts);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            int *na = realloc(alts, (size_t)cap * sizeof *na);
            if (!na) {
                free(alts);
                return px_fail(ps, "out of memory");
            }
            alts = na;
        }
        alts[n++] = s;
        if (ps->i < ps->len && ps->p[ps->i] == '|') {
            ps->i++;
            continue;
        }
        break;
    }
    int node = n == 1 ? alts[0] : px_node(ps, RN_ALT);
    if (n > 1 && node >= 0 && px_set_kids(ps, node, alts, n))
        node = -1;
    free(alts);
    return node;
}

void ip_regex_free(rx_prog *r)
{
    if (!r)
        return;
    free(r->nodes);
    free(r->kids);
    free(r->cls);
    free(r);
}

int ip_regex_compile(const char *pattern, size_t len, rx_prog **out, char *why, size_t why_n)
{
    *out = NULL;
    rx_prog *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, why_n, "out of memory");
        return -1;
    }
    rx_parser ps = {.p = pattern, .len = len, .r = r, .why = why, .why_n = why_n};
    int root = px_alt(&ps);
    if (root >= 0 && ps.i < ps.len)
        root = px_fail(&ps, "unmatched ')'");
    if (root < 0) {
        ip_regex_free(r);
        return -1;
    }
    r->root = root;
    r->n_caps = ps.cap_next;
    *out = r;
    return 0;
}

/* ---- matching ---- */

typedef enum { K_SEQ, K_GROUP, K_REP } k_kind;

typedef struct rx_cont {
    k_kind kind;
    int node, i;         /* K_SEQ: next child; K_REP: min */
    int max, start;      /* K_REP: max; K_GROUP/K_REP: where it began */
    const struct rx_cont *next;
} rx_cont;

typedef struct {
    const rx_prog *r;
    const uint16_t *s;
    int len;
    int *caps;           /* 2 per capture (1-based: caps[2*c], caps[2*c+1]); -1 unset */
    int end;
    int depth;
    long long steps;
    int over;            /* a limit was hit */
} rx_match;

static int in_class(const rx_class *c, uint16_t u)
{
    int in = u < 256 ? c->low[u]
                     : c->all_high || (c->high_nonspace && !is_js_space(u)) ||
                           (c->high_space && is_js_space(u));
    return in != c->negate;
}

static int word_at(const rx_match *x, int i)
{
    return i >= 0 && i < x->len && x->s[i] < 128 && is_word_ascii(x->s[i]);
}

static int m_node(rx_match *x, int node, int pos, const rx_cont *k);

static int run_k(rx_match *x, int pos, const rx_cont *k);

static int one_unit(const rx_match *x, const rx_node *c, int pos)
{
    if (pos >= x->len)
        return 0;
    uint16_t u = x->s[pos];
    if (c->kind == RN_CHAR)
        return u == c->ch;
    if (c->kind == RN_ANY)
        return u != '\n' && u != '\r' && u != 0x2028 && u != 0x2029;
    return in_class(&x->r->cls[c->cls], u);
}

/* A repeat of one code unit (no captures, never empty): the same choices as
 * RepeatMatcher, most (greedy) or fewest (lazy) first, without recursing per
 * unit, so long strings do not need a deep stack. */
static int m_repeat_unit(rx_match *x, const rx_node *c, int min, int max, int greedy, int pos,
                         const rx_cont *k)
{
    int most = 0;
    while ((max < 0 || most < max) && one_unit(x, c, pos + most))
        most++;
    if ((x->steps += most + 1) > RX_MAX_STEPS) {
        x->over = 1;
        return 0;
    }
    for (int i = 0; i <= most - min && !x->over; i++)
        if (run_k(x, pos + (greedy ? most - i : min + i), k))
            return 1;
    return 0;
}

static int m_repeat(rx_match *x, int node, int min, int max, int pos, const rx_cont *k)
{
    if (max == 0)
        return run_k(x, pos, k);
    const rx_node *n = &x->r->nodes[node];
    const rx_node *c = &x->r->nodes[x->r->kids[n->first]];
    if (c->kind == RN_CHAR || c->kind == RN_ANY || c->kind == RN_CLASS)
        return m_repeat_unit(x, c, min, max, n->greedy, pos, k);
    rx_cont d = {.kind = K_REP, .node = node, .i = min, .max = max, .start = pos, .next = k};
    int saved[2 * 4], *sv = saved;
    int ns = 2 * n->cap_n;
    if (ns > 2 * 4 && !(sv = malloc((size_t)ns * sizeof *sv))) {
        x->over = 2;
        return 0;
    }
    memcpy(sv, x->caps + 2 * n->cap_lo, (size_t)ns * sizeof *sv);
    int child = x->r->kids[n->first], r;
    if (min == 0 && !n->greedy) {
        r = run_k(x, pos, k);
        if (!r && !x->over) {
            for (int j = 0; j < ns; j++)
                x->caps[2 * n->cap_lo + j] = -1;
            r = m_node(x, child, pos, &d);
            if (!r)
                memcpy(x->caps + 2 * n->cap_lo, sv, (size_t)ns * sizeof *sv);
        }
    } else {
        for (int j = 0; j < ns; j++)
            x->caps[2 * n->cap_lo + j] = -1;
        r = m_node(x, child, pos, &d);
        if (!r)
            memcpy(x->caps + 2 * n->cap_lo, sv, (size_t)ns * sizeof *sv);
        if (!r && min == 0 && !x->over)
            r = run_k(x, pos, k);
    }
    if (sv != saved)
        free(sv);
    return r;
}

static int run_k(rx_match *x, int pos, const rx_cont *k)
{
    if (x->over)
        return 0;
    if (!k) {
        x->end = pos;
        return 1;
    }
    if (++x->depth > RX_MAX_DEPTH || ++x->steps > RX_MAX_STEPS) {
        x->over = 1;
        x->depth--;
        return 0;
    }
    int r = 0;
    const rx_node *n = &x->r->nodes[k->node];
    switch (k->kind) {
    case K_SEQ:
        if (k->i == n->n_kids) {
            r = run_k(x, pos, k->next);
        } else {
            rx_cont c = {.kind = K_SEQ, .node = k->node, .i = k->i + 1, .next = k->next};
            r = m_node(x, x->r->kids[n->first + k->i], pos, &c);
        }
        break;
    case K_GROUP: {
        int *cp = x->caps + 2 * n->cap;
        int o0 = cp[0], o1 = cp[1];
        cp[0] = k->start;
        cp[1] = pos;
        r = run_k(x, pos, k->next);
        if (!r) {
            cp[0] = o0;
            cp[1] = o1;
        }
        break;
    }
    case K_REP:
        /* ECMAScript: an iteration past the minimum that matched nothing fails */
        if (k->i == 0 && pos == k->start)
            r = 0;
        else
            r = m_repeat(x, k->node, k->i ? k->i - 1 : 0, k->max < 0 ? -1 : k->max - 1, pos,
                         k->next);
        break;
    }
    x->depth--;
    return r;
}

static int m_node(rx_match *x, int node, int pos, const rx_cont *k)
{
    if (x->over)
        return 0;
    if (++x->depth > RX_MAX_DEPTH || ++x->steps > RX_MAX_STEPS) {
        x->over = 1;
        x->depth--;
        return 0;
    }
    const rx_node *n = &x->r->nodes[node];
    int r = 0;
    uint16_t u = pos < x->len ? x->s[pos] : 0;
    switch (n->kind) {
    case RN_CHAR: r = pos < x->len && u == n->ch && run_k(x, pos + 1, k); break;
    case RN_ANY:
        r = pos < x->len && u != '\n' && u != '\r' && u != 0x2028 && u != 0x2029 &&
            run_k(x, pos + 1, k);
        break;
    case RN_CLASS: r = pos < x->len && in_class(&x->r->cls[n->cls], u) && run_k(x, pos + 1, k); break;
    case RN_BOL: r = pos == 0 && run_k(x, pos, k); break;
    case RN_EOL: r = pos == x->len && run_k(x, pos, k); break;
    case RN_WORDB: r = word_at(x, pos - 1) != word_at(x, pos) && run_k(x, pos, k); break;
    case RN_NWORDB: r = word_at(x, pos - 1) == word_at(x, pos) && run_k(x, pos, k); break;
    case RN_GROUP:
        if (n->cap) {
            rx_cont c = {.kind = K_GROUP, .node = node, .start = pos, .next = k};
            r = m_node(x, x->r->kids[n->first], pos, &c);
        } else {
            r = m_node(x, x->r->kids[n->first], pos, k);
        }
        break;
    case RN_ALT:
        for (int j = 0; j < n->n_kids && !r && !x->over; j++)
            r = m_node(x, x->r->kids[n->first + j], pos, k);
        break;
    case RN_SEQ:
        if (n->n_kids == 0) {
            r = run_k(x, pos, k);
        } else {
            rx_cont c = {.kind = K_SEQ, .node = node, .i = 1, .next = k};
            r = m_node(x, x->r->kids[n->first], pos, &c);
        }
        break;
    case RN_REPEAT: r = m_repeat(x, node, n->min, n->max, pos, k); break;
    }
    x->depth--;
    return r;
}

/* The first match at or after from (RegExpBuiltinExec): 1 and x->caps[0..1]
 * its span, 0 none, -1 a limit hit. */
static int rx_exec(rx_match *x, int from)
{
    for (int at = from; at <= x->len; at++) {
        for (int j = 0; j < 2 * (x->r->n_caps + 1); j++)
            x->caps[j] = -1;
        x->depth = 0;
        if (m_node(x, x->r->root, at, NULL)) {
            x->caps[0] = at;
            x->caps[1] = x->end;
            return 1;
        }
        if (x->over)
            return -1;
    }
    return 0;
}

/* ---- UTF-8 <-> UTF-16, as TextDecoder and TextEncoder do ---- */

/* WHATWG UTF-8 decode (replacement U+FFFD per maximal subpart, a leading BOM
 * dropped) into *out (malloc'ed, *n units). */
int ip_utf8_to_utf16(const uint8_t *b, size_t len, uint16_t **out, size_t *n)
{
    uint16_t *u = malloc((len + 1) * sizeof *u);
    if (!u)
        return -1;
    size_t k = 0;
    uint32_t cp = 0;
    int need = 0, seen = 0;
    uint8_t lo = 0x80, hi = 0xbf;
    for (size_t i = 0; i < len;) {
        uint8_t c = b[i];
        uint32_t emit = 0xffffffffu;
        if (need == 0) {
            i++;
            if (c < 0x80) {
                emit = c;
            } else if (c >= 0xc2 && c <= 0xdf) {
                need = 1, cp = c & 0x1f;
            } else if (c >= 0xe0 && c <= 0xef) {
                lo = c == 0xe0 ? 0xa0 : 0x80;
                hi = c == 0xed ? 0x9f : 0xbf;
                need = 2, cp = c & 0xf;
            } else if (c >= 0xf0 && c <= 0xf4) {
                lo = c == 0xf0 ? 0x90 : 0x80;
                hi = c == 0xf4 ? 0x8f : 0xbf;
                need = 3, cp = c & 0x7;
            } else {
                emit = 0xfffd;
            }
        } else if (c < lo || c > hi) {
            need = seen = 0, cp = 0, lo = 0x80, hi = 0xbf;
            emit = 0xfffd; /* the byte is read again */
        } else {
            i++;
            lo = 0x80, hi = 0xbf;
            cp = (cp << 6) | (c & 0x3f);
            if (++seen == need) {
                emit = cp;
                need = seen = 0;
                cp = 0;
            }
        }
        if (emit == 0xffffffffu)
            continue;
        if (emit == 0xfeff && k == 0 && i <= 3 && b[0] == 0xef)
            continue; /* BOM */
        if (emit >= 0x10000) {
            emit -= 0x10000;
            u[k++] = (uint16_t)(0xd800 + (emit >> 10));
            u[k++] = (uint16_t)(0xdc00 + (emit & 0x3ff));
        } else {
            u[k++] = (uint16_t)emit;
        }
    }
    if (need)
        u[k++] = 0xfffd;
    *out = u;
    *n = k;
    return 0;
}

/* TextEncoder: pairs joined, lone surrogates as U+FFFD. */
void ip_utf16_to_utf8(const uint16_t *u, size_t n, ip_strvec *sv)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (u[i + 1] - 0xdc00);
            i++;
        } else if (c >= 0xd800 && c <= 0xdfff) {
            c = 0xfffd;
        }
        uint8_t o[4];
        int m;
        if (c < 0x80) {
            o[0] = (uint8_t)c, m = 1;
        } else if (c < 0x800) {
            o[0] = (uint8_t)(0xc0 | c >> 6), o[1] = (uint8_t)(0x80 | (c & 0x3f)), m = 2;
        } else if (c < 0x10000) {
            o[0] = (uint8_t)(0xe0 | c >> 12), o[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            o[2] = (uint8_t)(0x80 | (c & 0x3f)), m = 3;
        } else {
            o[0] = (uint8_t)(0xf0 | c >> 18), o[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
            o[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)), o[3] = (uint8_t)(0x80 | (c & 0x3f)), m = 4;
        }
        ip_sv_add(sv, o, (size_t)m);
    }
}

/* ---- replace ---- */

typedef struct {
    uint16_t *u;
    size_t n, cap;
    int oom;
} u16buf;

static void ub_add(u16buf *b, const uint16_t *p, size_t n)
{
    if (b->oom || n == 0)
        return;
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2 + 16;
        uint16_t *nu = realloc(b->u, cap * sizeof *nu);
        if (!nu) {
            b->oom = 1;
            return;
        }
        b->u = nu;
        b->cap = cap;
    }
    memcpy(b->u + b->n, p, n * sizeof *p);
    b->n += n;
}

static void ub_add_ascii(u16buf *b, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t c = (uint8_t)p[i];
        ub_add(b, &c, 1);
    }
}

/* GetSubstitution: $$ $& $` $' $n $nn (no named groups). */
static void substitute(u16buf *o, const rx_match *x, const char *rw, size_t rn)
{
    int m = x->r->n_caps, pos = x->caps[0], end = x->caps[1];
    for (size_t i = 0; i < rn; i++) {
        char c = rw[i];
        if (c != '$' || i + 1 >= rn) {
            ub_add_ascii(o, &c, 1);
            continue;
        }
        char d = rw[i + 1];
        if (d == '$') {
            ub_add_ascii(o, "$", 1);
            i++;
        } else if (d == '&') {
            ub_add(o, x->s + pos, (size_t)(end - pos));
            i++;
        } else if (d == '`') {
            ub_add(o, x->s, (size_t)pos);
            i++;
        } else if (d == '\'') {
            ub_add(o, x->s + end, (size_t)(x->len - end));
            i++;
        } else if (d >= '0' && d <= '9') {
            int two = i + 2 < rn && rw[i + 2] >= '0' && rw[i + 2] <= '9';
            int idx = two ? (d - '0') * 10 + (rw[i + 2] - '0') : d - '0';
            if (two && idx > m) {
                two = 0;
                idx = d - '0';
            }
            if (idx >= 1 && idx <= m) {
                int a = x->caps[2 * idx], b = x->caps[2 * idx + 1];
                if (a >= 0)
                    ub_add(o, x->s + a, (size_t)(b - a));
            } else {
                ub_add_ascii(o, rw + i, two ? 3 : 2);
            }
            i += two ? 2 : 1;
        } else {
            ub_add_ascii(o, "$", 1);
        }
    }
}

/* One string: s (UTF-8) with pattern's matches replaced by rewrite, into sv
 * as one element. Returns 0, -1 no memory, -2 a match limit. */
int ip_regex_replace(const rx_prog *r, const uint8_t *s, size_t len, const char *rewrite,
                     size_t rewrite_len, int global, ip_strvec *sv)
{
    uint16_t *u = NULL;
    size_t n = 0;
    if (len > (size_t)1 << 30 || ip_utf8_to_utf16(s, len, &u, &n))
        return -1;
    int *caps = malloc((size_t)(2 * (r->n_caps + 1)) * sizeof *caps);
    u16buf o = {0};
    rx_match x = {.r = r, .s = u, .len = (int)n, .caps = caps};
    int rc = caps ? 0 : -1;
    size_t next = 0;
    for (int from = 0; rc == 0 && from <= x.len;) {
        int f = rx_exec(&x, from);
        if (f < 0) {
            rc = x.over == 2 ? -1 : -2;
            break;
        }
        if (f == 0)
            break;
        ub_add(&o, u + next, (size_t)x.caps[0] - next);
        substitute(&o, &x, rewrite, rewrite_len);
        next = (size_t)x.caps[1];
        if (!global)
            break;
        from = x.caps[1] == x.caps[0] ? x.caps[1] + 1 : x.caps[1];
    }
    if (rc == 0) {
        ub_add(&o, u + next, n - next);
        if (o.oom)
            rc = -1;
    }
    if (rc == 0) {
        ip_utf16_to_utf8(o.u, o.n, sv);
        ip_sv_end(sv);
    }
    free(o.u);
    free(caps);
    free(u);
    return rc;
}
