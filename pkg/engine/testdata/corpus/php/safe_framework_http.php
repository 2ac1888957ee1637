<?php
// safe: php.ssrf.request
// The hosts are fixed; request data is an encoded path segment.
namespace App\Services;

use Illuminate\Support\Facades\Http;
use Illuminate\Http\Request;
use Symfony\Component\HttpClient\HttpClient;

class PreviewService
{
    public function fetch(Request $request)
    {
        $id = rawurlencode($request->input('url'));
        $page = Http::get('https://previews.example.com/' . $id);
        $client = HttpClient::create();
        $meta = $client->request('GET', 'https://meta.example.com/items', ['query' => ['id' => $request->input('meta')]]);
        $headers = get_headers('https://status.example.com/health');
        return $page->body();
    }
}
