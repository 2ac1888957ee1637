<?php
// safe: php.path.file-access php.xss.echo php.deser.unserialize php.redirect.open
// The same controller with base names, escaping, JSON and a route URL.

namespace App\Controller;

use Symfony\Bundle\FrameworkBundle\Controller\AbstractController;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\Routing\Annotation\Route;

class DocumentController extends AbstractController
{
    #[Route('/documents/{name}', name: 'document_show')]
    public function show(string $name): Response
    {
        return new Response(file_get_contents('/srv/documents/' . basename($name)));
    }

    #[Route('/search', name: 'document_search')]
    public function search(Request $request): Response
    {
        $q = $request->query->get('q');
        return new Response('<p>No result for ' . htmlspecialchars($q, ENT_QUOTES) . '</p>');
    }

    #[Route('/import', methods: ['POST'])]
    public function import(Request $request): Response
    {
        $state = json_decode($request->getContent(), true);
        if ($request->isMethod('POST')) {
            return $this->redirect('/documents');
        }
        return new Response('', 204);
    }
}
