<?php
// Outgoing requests through the Laravel HTTP facade and Symfony's client.
namespace App\Services;

use Illuminate\Support\Facades\Http;
use Illuminate\Http\Request;
use Symfony\Component\HttpClient\HttpClient;

class PreviewService
{
    public function fetch(Request $request)
    {
        $url = $request->input('url');
        $page = Http::get($url); // vuln: php.ssrf.request
        $client = HttpClient::create();
        $meta = $client->request('GET', $request->input('meta')); // vuln: php.ssrf.request
        $headers = get_headers($request->query('probe')); // vuln: php.ssrf.request
        return $page->body();
    }
}
