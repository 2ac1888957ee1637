<?php
// A Symfony controller: routed actions, the request's parameter bags and
// the raw body.

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
        return new Response(file_get_contents('/srv/documents/' . $name)); // vuln: php.path.file-access
    }

    #[Route('/search', name: 'document_search')]
    public function search(Request $request): Response
    {
        $q = $request->query->get('q');
        return new Response('<p>No result for ' . $q . '</p>'); // vuln: php.xss.echo
    }

    #[Route('/import', methods: ['POST'])]
    public function import(Request $request): Response
    {
        $state = unserialize($request->getContent()); // vuln: php.deser.unserialize
        return $this->redirect($request->headers->get('referer')); // vuln: php.redirect.open
    }
}
