<?php
// safe: php.sqli.string-query php.xss.echo php.cmdi.shell php.redirect.open php.path.file-access
// The same controller with bindings, escaping, quoting, named routes and
// base names.

namespace App\Http\Controllers;

use Illuminate\Http\Request;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Request as RequestFacade;
use Illuminate\Support\Facades\Route;

class ReportController extends Controller
{
    public function index(Request $request)
    {
        $year = $request->query('year');
        $rows = DB::select("SELECT * FROM reports WHERE year = ?", [$year]);
        if ($request->has('title') && $request->user()) {
            return response("<h1>" . e($request->input('title')) . "</h1>");
        }
        return response("<h1>Reports</h1>");
    }

    public function export()
    {
        $format = request('format');
        exec('report-export --format ' . escapeshellarg($format));
        $next = RequestFacade::input('next');
        return redirect()->route('reports.index', ['after' => $next]);
    }
}

Route::get('/files/{name}', function ($name) {
    return response()->download('/srv/files/' . basename($name));
});
