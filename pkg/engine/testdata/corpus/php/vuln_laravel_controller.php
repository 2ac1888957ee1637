<?php
// A Laravel controller reading the request through its Request parameter,
// the request() helper and the Request facade.

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
        $rows = DB::select("SELECT * FROM reports WHERE year = " . $year); // vuln: php.sqli.string-query
        return response("<h1>" . $request->input('title') . "</h1>"); // vuln: php.xss.echo
    }

    public function export()
    {
        $format = request('format');
        exec('report-export --format ' . $format); // vuln: php.cmdi.shell
        $next = RequestFacade::input('next');
        return redirect()->away($next); // vuln: php.redirect.open
    }
}

Route::get('/files/{name}', function ($name) {
    return response()->download('/srv/files/' . $name); // vuln: php.path.file-access
});
