/* sitecrawl.parse._scan: markup_cost(body, budget), the estimate of what a body would cost the
 * HTML tree builder, read before it parses it. The model and its reasons are in
 * sitecrawl/_markup.py, whose markup_cost_py is this function's Python twin: the tests hold
 * the two to the same answers, so a change here is a change there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define OPTION_WEIGHT 5
#define END_TAG_REACH 64

/* What a tag name is (flags) and its implied-end group. */
enum {
    VOID = 1 << 0, RAW = 1 << 1, PLAINTEXT = 1 << 2, FOREIGN = 1 << 3, INTEGRATION = 1 << 4,
    BREAKOUT = 1 << 5, SCOPE = 1 << 6, TABLE_SCOPE = 1 << 7, TABLE_PART = 1 << 8,
    LIST = 1 << 9, KEPT_OPEN = 1 << 10, SELECT = 1 << 11, LI = 1 << 12,
};
enum {
    G_P = 1 << 0, G_LI = 1 << 1, G_DTDD = 1 << 2, G_OPTION = 1 << 3, G_OPTGROUP = 1 << 4,
    G_CELL = 1 << 5, G_ROW = 1 << 6, G_SECTION = 1 << 7, G_RUBY = 1 << 8, G_A = 1 << 9,
    G_HEADING = 1 << 10, G_BUTTON = 1 << 11,
};

/* Byte classes: SP whitespace, NAME_END ends a tag or attribute name, VALUE_END ends an
   unquoted value, LOWER maps A-Z to a-z (the other bytes to themselves). */
enum { SP = 1, NAME_END = 2, VALUE_END = 4, ATTR_END = 8 };
static unsigned char CLASS[256], LOWER[256];

static void
init_classes(void)
{
    for (int c = 0; c < 256; c++)
        LOWER[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    const char *spaces = " \t\n\f\r";
    for (const char *p = spaces; *p; p++)
        CLASS[(unsigned char)*p] = SP | NAME_END | VALUE_END | ATTR_END;
    CLASS['/'] |= NAME_END | ATTR_END;
    CLASS['>'] |= NAME_END | VALUE_END | ATTR_END;
    CLASS['='] |= ATTR_END;
}

typedef struct {
    uint64_t hash;
    unsigned flags, group, closes;
} Kind;

#define SLOTS 1024
static Kind table[SLOTS];

static uint64_t
fnv(const unsigned char *s, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        h = (h ^ LOWER[s[i]]) * 1099511628211ULL;
    }
    return h ? h : 1;
}

static Kind *
slot(uint64_t hash)
{
    size_t i = hash & (SLOTS - 1);
    while (table[i].hash && table[i].hash != hash)
        i = (i + 1) & (SLOTS - 1);
    return &table[i];
}

static void
add(const char *names, unsigned flags, unsigned group, unsigned closes)
{
    const char *p = names;
    while (*p) {
        const char *e = strchr(p, ' ');
        Py_ssize_t n = e ? e - p : (Py_ssize_t)strlen(p);
        Kind *k = slot(fnv((const unsigned char *)p, n));
        k->hash = fnv((const unsigned char *)p, n);
        k->flags |= flags;
        k->group |= group;
        k->closes |= closes;
        p += n + (e != NULL);
    }
}

static void
init_table(void)
{
    add("address article aside blockquote center details dialog dir div dl fieldset "
        "figcaption figure footer header hgroup main menu nav ol p search section summary ul "
        "pre listing form table hr xmp plaintext", 0, 0, G_P);
    add("p", 0, G_P, G_P);
    add("li", LI, G_LI, G_P | G_LI);
    add("dd dt", 0, G_DTDD, G_P | G_DTDD);
    add("option", 0, G_OPTION, G_OPTION);
    add("optgroup", 0, G_OPTGROUP, G_OPTION | G_OPTGROUP);
    add("td th", 0, G_CELL, G_CELL);
    add("tr", 0, G_ROW, G_CELL | G_ROW);
    add("tbody thead tfoot", 0, G_SECTION, G_CELL | G_ROW | G_SECTION);
    add("rb rt rtc rp", 0, G_RUBY, G_RUBY);
    add("a", 0, G_A, G_A);
    add("button", 0, G_BUTTON, G_BUTTON);
    add("h1 h2 h3 h4 h5 h6", 0, G_HEADING, G_P | G_HEADING);
    add("area base basefont bgsound br col embed frame hr img input keygen link meta param "
        "source track wbr", VOID, 0, 0);
    add("script style xmp iframe noembed noframes textarea title", RAW, 0, 0);
    add("plaintext", PLAINTEXT, 0, 0);
    add("svg math", FOREIGN, 0, 0);
    add("foreignobject desc title mi mo mn ms mtext annotation-xml", INTEGRATION, 0, 0);
    add("b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr "
        "i img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup "
        "table tt u ul var", BREAKOUT, 0, 0);
    add("applet caption html table td th marquee object template", SCOPE, 0, 0);
    add("html table template", TABLE_SCOPE, 0, 0);
    add("table tbody thead tfoot tr td th caption colgroup", TABLE_PART, 0, 0);
    add("ol ul", LIST, 0, 0);
    add("body html br", KEPT_OPEN, 0, 0);
    add("select", SELECT, 0, 0);
}

static const Kind OTHER = {0, 0, 0, 0};

static const Kind *
lookup(uint64_t hash)
{
    const Kind *k = slot(hash);
    return k->hash ? k : &OTHER;
}

typedef struct {
    uint64_t hash;
    unsigned flags, group;
    int foreign; /* is this element's content SVG or MathML? */
} Open;

#define IS_SPACE(c) (CLASS[(unsigned char)(c)] & SP)
#define IS_ALPHA(c) ((unsigned)(((c) | 0x20) - 'a') < 26)

/* From just past a tag's name: the position past its '>', or -1 when the body ends inside
   the tag; its attributes and self-closing flag through the pointers. */
static Py_ssize_t
tag_end(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t *attributes,
        int *self_closing)
{
    *attributes = 0;
    *self_closing = 0;
    for (;;) {
        Py_ssize_t skip = pos;
        while (pos < n && (CLASS[b[pos]] & (SP | NAME_END)) && b[pos] != '>')
            pos++;
        if (pos >= n)
            return -1;
        if (b[pos] == '>') {
            *self_closing = pos - 1 >= skip && b[pos - 1] == '/';
            return pos + 1;
        }
        ++*attributes;
        pos++; /* the name's first character, whatever it is */
        while (pos < n && !(CLASS[b[pos]] & ATTR_END))
            pos++;
        Py_ssize_t after = pos;
        while (after < n && IS_SPACE(b[after]))
            after++;
        if (after < n && b[after] == '=') {
            pos = after + 1;
            while (pos < n && IS_SPACE(b[pos]))
                pos++;
            if (pos < n && (b[pos] == '"' || b[pos] == '\'')) {
                const unsigned char *close = memchr(b + pos + 1, b[pos], n - pos - 1);
                if (close == NULL)
                    return -1;
                pos = close - b + 1;
            }
            else {
                while (pos < n && !(CLASS[b[pos]] & VALUE_END))
                    pos++;
            }
        }
    }
}

static Py_ssize_t
find_byte(const unsigned char *b, Py_ssize_t n, Py_ssize_t from, unsigned char c)
{
    if (from >= n)
        return -1;
    const unsigned char *p = memchr(b + from, c, n - from);
    return p ? p - b : -1;
}

/* Past the end of a comment opened at lt ("--" then ">" or "--!>" from lt + 2), or n. */
static Py_ssize_t
comment_end(const unsigned char *b, Py_ssize_t n, Py_ssize_t lt)
{
    Py_ssize_t g = lt + 2;
    while ((g = find_byte(b, n, g, '>')) >= 0) {
        if (g - 2 >= lt + 2 && b[g - 1] == '-' && b[g - 2] == '-')
            return g + 1;
        if (g - 3 >= lt + 2 && b[g - 1] == '!' && b[g - 2] == '-' && b[g - 3] == '-')
            return g + 1;
        g++;
    }
    return n;
}

/* Where "</name" followed by space, '/' or '>' starts, from pos (ASCII case-insensitive), or n. */
static Py_ssize_t
raw_end(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, const unsigned char *name,
        Py_ssize_t len)
{
    while ((pos = find_byte(b, n, pos, '<')) >= 0) {
        Py_ssize_t at = pos + 2;
        if (at + len < n && b[pos + 1] == '/') {
            Py_ssize_t i = 0;
            while (i < len && (b[at + i] | 0x20) == (name[i] | 0x20))
                i++;
            unsigned char c = b[at + len];
            if (i == len && (IS_SPACE(c) || c == '/' || c == '>'))
                return pos;
        }
        pos++;
    }
    return n;
}

static PyObject *
markup_cost(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "markup_cost() takes bytes and an optional budget");
        return NULL;
    }
    long long budget = 100000000LL;
    if (nargs == 2 && (budget = PyLong_AsLongLong(args[1])) == -1 && PyErr_Occurred())
        return NULL;
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]);

    Open small[256];
    Open *stack = small;
    Py_ssize_t top = 0, capacity = 256;
    long long cost = 0;
    Py_ssize_t depth = 0, most_attributes = 0, options = 0, most_options = 0;
    Py_ssize_t pos = 0;

    while (cost <= budget) {
        Py_ssize_t lt = find_byte(b, n, pos, '<');
        if (lt < 0 || lt + 1 >= n)
            break;
        unsigned char c = b[lt + 1];
        int in_foreign = top > 0 && stack[top - 1].foreign;
        if (c == '!') {
            if (lt + 3 < n && b[lt + 2] == '-' && b[lt + 3] == '-') {
                pos = comment_end(b, n, lt);
            }
            else if (in_foreign && n - lt >= 9 && memcmp(b + lt, "<![CDATA[", 9) == 0) {
                Py_ssize_t e = lt + 9;
                pos = n;
                while ((e = find_byte(b, n, e, '>')) >= 0) {
                    if (e - 2 >= lt + 9 && b[e - 1] == ']' && b[e - 2] == ']') {
                        pos = e + 1;
                        break;
                    }
                    e++;
                }
            }
            else {
                Py_ssize_t e = find_byte(b, n, lt + 2, '>');
                pos = e >= 0 ? e + 1 : n;
            }
            continue;
        }
        int closing = c == '/';
        Py_ssize_t start = closing ? lt + 2 : lt + 1;
        if (start >= n || !IS_ALPHA(b[start])) {
            if (c == '?' || (closing && start < n && b[start] != '>')) {
                Py_ssize_t e = find_byte(b, n, start, '>');
                pos = e >= 0 ? e + 1 : n;
            }
            else {
                pos = closing ? start + 1 : start;
            }
            continue;
        }
        Py_ssize_t name_end = start;
        uint64_t hash = 1469598103934665603ULL;
        while (name_end < n && !(CLASS[b[name_end]] & NAME_END))
            hash = (hash ^ LOWER[b[name_end++]]) * 1099511628211ULL;
        hash = hash ? hash : 1;
        const Kind *kind = lookup(hash);
        Py_ssize_t attributes;
        int self_closing;
        pos = tag_end(b, n, name_end, &attributes, &self_closing);
        if (pos < 0)
            break;
        if (closing) {
            if (kind->flags & KEPT_OPEN)
                continue;
            unsigned stops = kind->flags & TABLE_PART ? TABLE_SCOPE
                             : kind->flags & LI       ? SCOPE | LIST
                                                      : SCOPE;
            Py_ssize_t last = top - 1 - END_TAG_REACH > -1 ? top - 1 - END_TAG_REACH : -1;
            for (Py_ssize_t k = top - 1; k > last; k--) {
                cost += 1;
                if (stack[k].hash == hash) {
                    top = k;
                    break;
                }
                if (stack[k].flags & stops)
                    break;
            }
            continue;
        }
        cost += (long long)attributes * (attributes - 1) / 2;
        if (attributes > most_attributes)
            most_attributes = attributes;
        if (in_foreign && (kind->flags & BREAKOUT)) {
            while (top > 0 && stack[top - 1].foreign)
                top--;
            in_foreign = 0;
        }
        if (kind->closes)
            while (top > 0 && (stack[top - 1].group & kind->closes))
                top--;
        cost += top;
        if (kind->flags & SELECT) {
            options = 0;
        }
        else if (kind->group & (G_OPTION | G_OPTGROUP)) {
            int in_select = 0;
            for (Py_ssize_t k = top - 1; k >= 0 && k >= top - 3; k--)
                in_select |= (stack[k].flags & SELECT) != 0;
            if (in_select) {
                cost += (long long)options * OPTION_WEIGHT;
                options++;
                if (options > most_options)
                    most_options = options;
            }
        }
        if ((kind->flags & VOID) || (self_closing && (in_foreign || (kind->flags & FOREIGN))))
            continue;
        if (top == capacity) {
            Py_ssize_t grown = capacity * 2;
            Open *bigger = stack == small ? PyMem_Malloc(grown * sizeof(Open))
                                          : PyMem_Realloc(stack, grown * sizeof(Open));
            if (bigger == NULL) {
                if (stack != small)
                    PyMem_Free(stack);
                return PyErr_NoMemory();
            }
            if (stack == small)
                memcpy(bigger, small, sizeof(small));
            stack = bigger;
            capacity = grown;
        }
        stack[top].hash = hash;
        stack[top].flags = kind->flags;
        stack[top].group = kind->group;
        stack[top].foreign =
            (kind->flags & FOREIGN) || (in_foreign && !(kind->flags & INTEGRATION));
        top++;
        if (top > depth)
            depth = top;
        if (!in_foreign) {
            if (kind->flags & RAW)
                pos = raw_end(b, n, pos, b + start, name_end - start);
            else if (kind->flags & PLAINTEXT)
                break;
        }
    }
    if (stack != small)
        PyMem_Free(stack);
    return Py_BuildValue("(Lnnn)", cost, depth, most_attributes, most_options);
}

/* markup_counts(body) -> (tags, separators): the '<' bytes, and the bytes that can stand
   right before an attribute (whitespace and \v, '/', quotes); markup_bound in _markup.py turns them
   into a bound of markup_cost. One pass with no state carried between bytes, summed in byte
   blocks, so that it vectorizes (and is built for AVX2 too, where GCC can). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
count_marks(const unsigned char *b, Py_ssize_t n, Py_ssize_t *tags, Py_ssize_t *separators)
{
    Py_ssize_t t = 0, s = 0, i = 0;
    while (i < n) {
        /* 224 bytes a block: under 256 (a byte's sum), and whole 32- and 16-byte vectors. */
        Py_ssize_t end = n - i > 224 ? i + 224 : n;
        unsigned char block_t = 0, block_s = 0;
        for (; i < end; i++) {
            unsigned char c = b[i];
            block_t += (unsigned char)(c == '<');
            /* \t \n \v \f \r and space; '/' and '\'' (c | 8 is '/' for both); '"'. Written so
               that GCC keeps byte lanes (an == chain becomes a 64-bit bit test). */
            unsigned char space = (unsigned char)((unsigned char)(c - 9) < 5) | (c == ' ');
            unsigned char mark = (unsigned char)(((unsigned char)(c | 8) == '/') | (c == '"'));
            block_s += (unsigned char)(space | mark);
        }
        t += block_t;
        s += block_s;
    }
    *tags = t;
    *separators = s;
}

static PyObject *
markup_counts(PyObject *module, PyObject *body)
{
    if (!PyBytes_Check(body)) {
        PyErr_SetString(PyExc_TypeError, "markup_counts() takes bytes");
        return NULL;
    }
    Py_ssize_t tags, separators;
    count_marks((const unsigned char *)PyBytes_AS_STRING(body), PyBytes_GET_SIZE(body), &tags,
                &separators);
    return Py_BuildValue("(nn)", tags, separators);
}

static PyMethodDef methods[] = {
    {"markup_cost", (PyCFunction)(void (*)(void))markup_cost, METH_FASTCALL,
     "markup_cost(body, budget=100000000, /)\n--\n\n"
     "(cost, depth, attributes, options): what the body would cost the HTML tree builder."},
    {"markup_counts", markup_counts, METH_O,
     "markup_counts(body, /)\n--\n\n"
     "(tags, separators): the '<' bytes and the bytes that can precede an attribute."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl.parse._scan", "The markup cost estimate (see _markup.py).", 0,
    methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    init_classes();
    init_table();
    return PyModule_Create(&module);
}
