package java

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// typeOf resolves a type node to a qualified, erased type name ("" for
// `var` and unknown nodes).
func (l *lowerer) typeOf(n *syntax.Node, cls *classCtx) string {
	if n == nil {
		return ""
	}
	switch n.Type {
	case "integral_type", "floating_point_type", "boolean_type", "void_type":
		return l.text(n)
	case "type_identifier", "identifier":
		name := l.text(n)
		if name == "var" {
			return ""
		}
		return l.resolveType(name, cls)
	case "scoped_type_identifier", "scoped_identifier":
		return l.resolveDotted(l.dottedType(n), cls)
	case "generic_type":
		for _, c := range n.Children {
			if c.Type != "type_arguments" {
				return l.typeOf(c, cls)
			}
		}
	case "array_type":
		return l.typeOf(n.Child("element"), cls) + dims(l.text(n.Child("dimensions")))
	case "annotated_type":
		for _, c := range n.Children {
			if c.Type != "annotation" && c.Type != "marker_annotation" {
				return l.typeOf(c, cls)
			}
		}
	}
	return ""
}

// dottedType renders a scoped type without type arguments or annotations.
func (l *lowerer) dottedType(n *syntax.Node) string {
	switch n.Type {
	case "type_identifier", "identifier":
		return l.text(n)
	case "generic_type":
		for _, c := range n.Children {
			if c.Type != "type_arguments" {
				return l.dottedType(c)
			}
		}
	case "scoped_type_identifier", "scoped_identifier":
		var parts []string
		for _, c := range n.Children {
			if c.Named && c.Type != "annotation" && c.Type != "marker_annotation" {
				parts = append(parts, l.dottedType(c))
			}
		}
		return strings.Join(parts, ".")
	}
	return l.text(n)
}

// dims returns "[]" for every pair of brackets in a dimensions text.
func dims(s string) string {
	return strings.Repeat("[]", strings.Count(s, "["))
}

// resolveDotted resolves a qualified type written in the source: a
// package-qualified name stays as written, Outer.Inner resolves Outer.
func (l *lowerer) resolveDotted(name string, cls *classCtx) string {
	first, rest, ok := strings.Cut(name, ".")
	if !ok {
		return l.resolveType(name, cls)
	}
	if isLowerStart(first) {
		return name
	}
	return l.resolveType(first, cls) + "." + rest
}

// resolveType resolves a simple type name as seen from class cls: member
// and enclosing classes, classes of the file, single-type imports,
// java.lang, on-demand imports of well-known packages, then the file's own
// package (a class of the same package declared in another file, as javac
// would find it, unless an on-demand import of a package we do not know
// could also supply it).
func (l *lowerer) resolveType(name string, cls *classCtx) string {
	if q, ok := l.resolveKnown(name, cls); ok {
		return q
	}
	if l.file.Package != "" && !l.unknownWildcard && !isLowerStart(name) {
		return l.file.Package + "." + name
	}
	return name
}

// resolveKnown resolves a simple type name from what the file says, without
// the same-package fallback.
func (l *lowerer) resolveKnown(name string, cls *classCtx) (string, bool) {
	if e, ok := l.mtparams[name]; ok {
		return e, true
	}
	for c := cls; c != nil; c = c.outer {
		if e, ok := c.tparams[name]; ok {
			return e, true
		}
		if c.cls.Name == name {
			return c.cls.QName, true
		}
		if q, ok := c.nested[name]; ok {
			return q, true
		}
	}
	if q, ok := l.fileTypes[name]; ok {
		return q, true
	}
	if q, ok := l.imports[name]; ok {
		return q, true
	}
	if javaLang[name] {
		return "java.lang." + name, true
	}
	for _, w := range l.wildcards {
		if known := wellKnown[w]; known != nil && known[name] {
			return w + "." + name, true
		}
	}
	return name, false
}

// isTypeName reports whether a simple name used as an expression qualifier
// denotes a type rather than a variable: a class the file knows of, or a
// capitalised name (Java naming conventions) that is no variable in scope.
func (l *lowerer) isTypeName(name string, cls *classCtx) bool {
	if name == "" {
		return false
	}
	if _, ok := l.resolveKnown(name, cls); ok {
		return true
	}
	return !isLowerStart(name) && !isConstantName(name)
}

func isLowerStart(s string) bool { return s != "" && s[0] >= 'a' && s[0] <= 'z' }

// isConstantName reports UPPER_SNAKE names (constants), which are fields.
func isConstantName(s string) bool {
	if len(s) < 2 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			return false
		}
	}
	return true
}

// javaLang lists the java.lang types code refers to by simple name.
var javaLang = setOf("Object", "String", "StringBuilder", "StringBuffer", "CharSequence", "Character", "Integer", "Long",
	"Short", "Byte", "Double", "Float", "Boolean", "Number", "Math", "StrictMath", "System", "Runtime", "Process",
	"ProcessBuilder", "Thread", "ThreadLocal", "Runnable", "Class", "ClassLoader", "Exception", "RuntimeException",
	"Error", "Throwable", "IllegalArgumentException", "IllegalStateException", "NullPointerException",
	"NumberFormatException", "ArrayIndexOutOfBoundsException", "IndexOutOfBoundsException", "ClassCastException",
	"UnsupportedOperationException", "ArithmeticException", "SecurityException", "InterruptedException",
	"CloneNotSupportedException", "ReflectiveOperationException", "ClassNotFoundException", "NoSuchMethodException",
	"NoSuchFieldException", "IllegalAccessException", "InstantiationException", "Iterable", "Comparable",
	"AutoCloseable", "Cloneable", "Enum", "Record", "Void", "Override", "Deprecated", "SuppressWarnings",
	"FunctionalInterface", "SafeVarargs", "StackOverflowError", "OutOfMemoryError", "AssertionError", "Appendable",
	"Readable", "Package", "StackTraceElement", "InheritableThreadLocal", "ProcessHandle", "StackWalker", "Module",
	"ModuleLayer", "SecurityManager", "ThreadGroup", "IllegalMonitorStateException", "NegativeArraySizeException",
	"ArrayStoreException", "EnumConstantNotPresentException", "TypeNotPresentException", "LinkageError",
	"ExceptionInInitializerError", "NoClassDefFoundError", "VirtualMachineError", "InternalError",
	"StringIndexOutOfBoundsException", "IllegalThreadStateException", "IllegalCallerException", "MatchException",
	"WrongThreadException", "ScopedValue")

// wellKnown lists classes of packages commonly imported with a wildcard, so
// that `import java.util.*;` still resolves List to java.util.List.
var wellKnown = map[string]map[string]bool{
	"java.util": setOf("List", "ArrayList", "LinkedList", "Map", "HashMap", "LinkedHashMap", "TreeMap", "Set", "HashSet",
		"LinkedHashSet", "TreeSet", "Collection", "Collections", "Arrays", "Iterator", "ListIterator", "Enumeration",
		"Properties", "Random", "Scanner", "Vector", "Stack", "Hashtable", "Optional", "Objects", "UUID", "Date",
		"Calendar", "Locale", "Base64", "StringTokenizer", "Queue", "Deque", "ArrayDeque", "SortedMap", "NavigableMap",
		"ConcurrentModificationException", "NoSuchElementException", "Comparator", "BitSet", "EnumMap", "EnumSet"),
	"java.io": setOf("File", "FileInputStream", "FileOutputStream", "FileReader", "FileWriter", "InputStream",
		"OutputStream", "Reader", "Writer", "BufferedReader", "BufferedWriter", "InputStreamReader",
		"OutputStreamWriter", "PrintWriter", "PrintStream", "IOException", "FileNotFoundException", "Serializable",
		"ObjectInputStream", "ObjectOutputStream", "ByteArrayInputStream", "ByteArrayOutputStream",
		"RandomAccessFile", "StringReader", "StringWriter", "Closeable", "UncheckedIOException", "DataInputStream"),
	"java.sql": setOf("Connection", "Statement", "PreparedStatement", "CallableStatement", "ResultSet", "DriverManager",
		"SQLException", "Types", "ResultSetMetaData", "DatabaseMetaData", "Date", "Timestamp"),
	"java.net": setOf("URL", "URI", "URLConnection", "HttpURLConnection", "URLDecoder", "URLEncoder", "Socket",
		"InetAddress", "MalformedURLException", "URISyntaxException"),
	"java.nio.file":          setOf("Path", "Paths", "Files", "StandardOpenOption", "FileSystems"),
	"java.security":          setOf("MessageDigest", "SecureRandom", "KeyPairGenerator", "KeyPair", "KeyStore", "Signature", "NoSuchAlgorithmException", "Provider", "Security", "Key", "PrivateKey", "PublicKey"),
	"javax.crypto":           setOf("Cipher", "KeyGenerator", "SecretKey", "SecretKeyFactory", "Mac", "NoSuchPaddingException"),
	"javax.crypto.spec":      setOf("SecretKeySpec", "IvParameterSpec", "GCMParameterSpec", "PBEKeySpec"),
	"javax.servlet":          setOf("ServletException", "ServletRequest", "ServletResponse", "ServletContext", "RequestDispatcher", "ServletConfig", "Filter", "FilterChain", "ServletOutputStream", "ServletInputStream"),
	"javax.servlet.http":     setOf("HttpServlet", "HttpServletRequest", "HttpServletResponse", "HttpSession", "Cookie", "Part"),
	"jakarta.servlet":        setOf("ServletException", "ServletRequest", "ServletResponse", "ServletContext", "RequestDispatcher", "ServletConfig", "Filter", "FilterChain", "ServletOutputStream", "ServletInputStream"),
	"jakarta.servlet.http":   setOf("HttpServlet", "HttpServletRequest", "HttpServletResponse", "HttpSession", "Cookie", "Part"),
	"javax.naming":           setOf("Context", "InitialContext", "NamingException", "NamingEnumeration"),
	"javax.naming.directory": setOf("DirContext", "InitialDirContext", "SearchControls", "SearchResult", "Attributes", "Attribute", "BasicAttribute", "BasicAttributes"),
	"javax.xml.xpath":        setOf("XPath", "XPathFactory", "XPathExpression", "XPathConstants", "XPathExpressionException"),
	"java.util.function":     setOf("Function", "BiFunction", "Supplier", "Consumer", "BiConsumer", "Predicate", "UnaryOperator", "BinaryOperator"),
	"java.util.stream":       setOf("Stream", "Collectors", "IntStream"),
	"java.util.concurrent":   setOf("ThreadLocalRandom", "ConcurrentHashMap", "ExecutorService", "Executors", "Callable", "Future", "TimeUnit", "CopyOnWriteArrayList"),
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
