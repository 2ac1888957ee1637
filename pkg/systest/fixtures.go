package systest

import "fmt"

// Applications the end-to-end tests and benchmarks scan. Each route is a
// flaw the engine reports (and automated verification confirms), so tests
// can count on their findings.

// FlaskPrelude opens a Flask application.
const FlaskPrelude = `import sqlite3
import subprocess
from flask import Flask, request

app = Flask(__name__)
`

// SQLInjection returns a Flask route, /path, whose handler builds an SQL
// query of table from the request argument arg.
func SQLInjection(path, table, arg string) string {
	return fmt.Sprintf(`

@app.route("/%[1]s")
def %[1]s():
    %[3]s = request.args.get("%[3]s")
    conn = sqlite3.connect("app.db")
    query = "SELECT * FROM %[2]s WHERE %[3]s = '" + %[3]s + "'"
    return str(conn.execute(query).fetchall())
`, path, table, arg)
}

// SQLInjectionRoute is the route /user with an SQL injection.
var SQLInjectionRoute = SQLInjection("user", "users", "name")

// CommandInjectionRoute is a Flask route that runs a shell command built
// from a request argument.
const CommandInjectionRoute = `

@app.route("/ping")
def ping():
    host = request.args.get("host")
    return subprocess.check_output("ping -c 1 " + host, shell=True)
`

// FlaskApp has an SQL injection and a command injection.
var FlaskApp = FlaskPrelude + SQLInjectionRoute + CommandInjectionRoute

// FlaskFiles is FlaskApp with its requirements, as an uploaded tree.
var FlaskFiles = map[string]string{"requirements.txt": "flask==3.0.0\n", "app.py": FlaskApp}

// ShellApp is a one-route Flask application with a command injection.
const ShellApp = "from flask import Flask, request\nimport os\napp = Flask(__name__)\n\n@app.route('/run')\ndef run():\n    os.system('ls ' + request.args.get('dir'))\n    return 'ok'\n"
